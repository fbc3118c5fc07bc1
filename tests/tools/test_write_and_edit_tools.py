import pytest

from sessions_app.runtime.tools.base import ToolError
from tests.tools.harness import run_tool


async def test_write_creates_a_new_file_with_its_directories(ws):
    result = await run_tool(ws, "write", {"filePath": str(ws.repo / "new/dir/a.txt"), "content": "hi\n"})
    assert result.output == "Wrote file successfully."
    assert (ws.repo / "new/dir/a.txt").read_text() == "hi\n"
    assert result.metadata["exists"] is False


async def test_write_refuses_an_existing_file_the_session_has_not_read(ws):
    with pytest.raises(ToolError, match="You must read file .*README.md before overwriting it"):
        await run_tool(ws, "write", {"filePath": str(ws.repo / "README.md"), "content": "x"})
    assert (ws.repo / "README.md").read_text() == "hello\n"


async def test_write_overwrites_a_file_read_earlier_in_the_session(ws):
    await run_tool(ws, "read", {"filePath": str(ws.repo / "README.md")})
    await run_tool(ws, "write", {"filePath": str(ws.repo / "README.md"), "content": "bye\n"})
    assert (ws.repo / "README.md").read_text() == "bye\n"


async def test_edit_replaces_a_unique_string(ws):
    await run_tool(ws, "read", {"filePath": str(ws.repo / "src/app.py")})
    result = await run_tool(ws, "edit", {"filePath": str(ws.repo / "src/app.py"), "oldString": "return 1",
                                         "newString": "return 2"})
    assert result.output == "Edit applied successfully."
    assert (ws.repo / "src/app.py").read_text() == "def main():\n    return 2\n"
    assert "-    return 1" in result.metadata["diff"] and "+    return 2" in result.metadata["diff"]


async def test_edit_reports_a_missing_old_string(ws):
    await run_tool(ws, "read", {"filePath": str(ws.repo / "src/app.py")})
    with pytest.raises(ToolError, match="^oldString not found in content$"):
        await run_tool(ws, "edit", {"filePath": str(ws.repo / "src/app.py"), "oldString": "nope",
                                    "newString": "x"})


async def test_edit_reports_multiple_matches_unless_replace_all(ws):
    (ws.repo / "dup.txt").write_text("a\na\n")
    await run_tool(ws, "read", {"filePath": str(ws.repo / "dup.txt")})
    with pytest.raises(ToolError, match="^Found multiple matches for oldString"):
        await run_tool(ws, "edit", {"filePath": str(ws.repo / "dup.txt"), "oldString": "a", "newString": "b"})
    await run_tool(ws, "edit", {"filePath": str(ws.repo / "dup.txt"), "oldString": "a", "newString": "b",
                                "replaceAll": True})
    assert (ws.repo / "dup.txt").read_text() == "b\nb\n"


async def test_edit_requires_a_prior_read(ws):
    with pytest.raises(ToolError, match="You must read file"):
        await run_tool(ws, "edit", {"filePath": str(ws.repo / "src/app.py"), "oldString": "return 1",
                                    "newString": "return 2"})
