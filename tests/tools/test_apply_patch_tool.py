import pytest

from sessions_app.runtime.tools.base import ToolError
from tests.tools.harness import run_tool

PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# New
+text
*** Update File: src/app.py
@@ def main():
-    return 1
+    return 42
*** Delete File: README.md
*** End Patch"""


async def test_it_adds_updates_and_deletes_files(ws):
    result = await run_tool(ws, "apply_patch", {"patchText": PATCH})
    assert result.output == ("Success. Updated the following files:\nA docs/new.md\nM src/app.py\nD README.md")
    assert (ws.repo / "docs/new.md").read_text() == "# New\ntext\n"
    assert (ws.repo / "src/app.py").read_text() == "def main():\n    return 42\n"
    assert not (ws.repo / "README.md").exists()


async def test_it_moves_a_file(ws):
    patch = ("*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@\n def main():\n"
             "-    return 1\n+    return 2\n*** End Patch")
    await run_tool(ws, "apply_patch", {"patchText": patch})
    assert not (ws.repo / "src/app.py").exists()
    assert (ws.repo / "src/main.py").read_text() == "def main():\n    return 2\n"


async def test_it_changes_nothing_when_a_hunk_does_not_apply(ws):
    patch = ("*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: src/app.py\n@@\n-nope\n+x\n"
             "*** End Patch")
    with pytest.raises(ToolError, match="Failed to find expected lines"):
        await run_tool(ws, "apply_patch", {"patchText": patch})
    assert not (ws.repo / "a.txt").exists()


async def test_it_rejects_text_without_the_envelope(ws):
    with pytest.raises(ToolError, match="Begin Patch"):
        await run_tool(ws, "apply_patch", {"patchText": "--- a\n+++ b\n"})
