"""TypeScript/JavaScript files get typescript-language-server when Node and it are installed (scripts/test.sh
puts it in .tools); the test is skipped elsewhere."""
import os
import shutil
from pathlib import Path

import pytest

from tests.lsp.helpers import new_session, run_tool_call

TOOLS = Path(__file__).resolve().parents[2] / ".tools" / "node_modules"
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (TOOLS / "typescript-language-server" / "lib" / "cli.mjs").exists()
    or not (TOOLS / "typescript" / "lib" / "tsserver.js").exists(),
    reason="node or typescript-language-server is not installed (scripts/test.sh installs it into .tools)")


def test_a_typescript_type_error_comes_back_and_the_server_is_listed(alice, llm):
    path = os.path.realpath(alice.repo / "total.ts")
    content = "export function total(price: number): number {\n  return price\n}\n\ntotal('a')\n"
    part = run_tool_call(alice, llm, new_session(alice), "write", {"filePath": path, "content": content})
    output = part["state"]["output"]
    assert output.startswith("Wrote file successfully.\n\nLSP errors detected in this file, please fix:\n"
                             f'<diagnostics file="{path}">\nERROR [5:7] Argument of type')
    status = alice.get("/lsp", params={"directory": str(alice.repo)}).json()
    assert [(s["id"], s["status"]) for s in status] == [("typescript", "connected")]
    found = alice.get("/find/symbol", params={"directory": str(alice.repo), "query": "total"}).json()
    assert any(s["name"] == "total" and s["location"]["uri"] == f"file://{path}" for s in found)
