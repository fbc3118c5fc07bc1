"""A file the agent writes or edits is checked by its language server (basedpyright for Python): the errors
come back in the tool's output and `metadata.diagnostics` (opencode's rendering), the next model request
carries them, and `lsp.client.diagnostics` / `lsp.updated` go out as events."""
import os

import pytest

from tests.events.sse_client import open_stream
from tests.lsp.helpers import FIXED, TYPE_ERROR, new_session, run_tool_call

pytestmark = pytest.mark.long_running(seconds=25)  # scheduled before shorter files (tests/conftest.py)


def model_calls(llm):
    return [r for r in llm.requests if "title generator" not in r.system_text.lower()]


def test_a_type_error_written_by_the_agent_comes_back_in_the_tool_output(alice, llm):
    path = os.path.realpath(alice.repo / "totals.py")
    session_id = new_session(alice)
    part = run_tool_call(alice, llm, session_id, "write", {"filePath": path, "content": TYPE_ERROR})
    output = part["state"]["output"]
    assert output.startswith("Wrote file successfully.\n\nLSP errors detected in this file, please fix:\n"
                             f'<diagnostics file="{path}">\nERROR [5:15] Argument of type')
    assert output.endswith("</diagnostics>")
    errors = part["state"]["metadata"]["diagnostics"][path]
    assert [e["severity"] for e in errors] == [1]
    assert errors[0]["range"]["start"] == {"line": 4, "character": 14}
    assert "cannot be assigned to parameter" in errors[0]["message"]
    tool_messages = [m for m in model_calls(llm)[-1].body["messages"] if m.get("role") == "tool"]
    assert "ERROR [5:15]" in str(tool_messages[-1]["content"])


def test_the_agent_loop_publishes_lsp_events(alice, llm):
    path = os.path.realpath(alice.repo / "totals.py")
    session_id = new_session(alice)
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        run_tool_call(alice, llm, session_id, "write", {"filePath": path, "content": TYPE_ERROR})
        updated, _ = stream.until(lambda d: d["payload"]["type"] == "lsp.updated")
        diagnostics, _ = stream.until(lambda d: d["payload"]["type"] == "lsp.client.diagnostics"
                                      and d["payload"]["properties"]["path"] == path)
    assert updated.data["payload"]["properties"] == {}
    assert diagnostics.data["payload"]["properties"] == {"serverID": "pyright", "path": path}
    assert diagnostics.data["directory"] == os.path.realpath(alice.repo)


def test_fixing_the_error_with_edit_clears_it(alice, llm):
    path = os.path.realpath(alice.repo / "totals.py")
    session_id = new_session(alice)
    run_tool_call(alice, llm, session_id, "write", {"filePath": path, "content": TYPE_ERROR})
    part = run_tool_call(alice, llm, session_id, "edit", {"filePath": path, "oldString": "compute_total('a', 2)",
                                                           "newString": "compute_total(3, 2)"})
    assert part["state"]["output"] == "Edit applied successfully."
    assert part["state"]["metadata"]["diagnostics"][path] == []
    assert open(path).read() == FIXED


def test_an_edit_that_breaks_a_clean_file_reports_only_that_file(alice, llm):
    clean = os.path.realpath(alice.repo / "clean.py")
    other = os.path.realpath(alice.repo / "other.py")
    session_id = new_session(alice)
    run_tool_call(alice, llm, session_id, "write", {"filePath": other, "content": TYPE_ERROR})
    run_tool_call(alice, llm, session_id, "write", {"filePath": clean, "content": "value: int = 1\n"})
    part = run_tool_call(alice, llm, session_id, "edit", {"filePath": clean, "oldString": "1",
                                                           "newString": "'one'"})
    output = part["state"]["output"]
    assert output.startswith(f'Edit applied successfully.\n\nLSP errors detected in this file, please fix:\n'
                             f'<diagnostics file="{clean}">\nERROR [1:14] Type "Literal[\'one\']"')
    assert other not in output  # edit reports its own file only; write also reports other files


def test_write_also_reports_other_files_errors(alice, llm):
    broken = os.path.realpath(alice.repo / "broken.py")
    fine = os.path.realpath(alice.repo / "fine.py")
    session_id = new_session(alice)
    run_tool_call(alice, llm, session_id, "write", {"filePath": broken, "content": TYPE_ERROR})
    part = run_tool_call(alice, llm, session_id, "write", {"filePath": fine, "content": "x: int = 1\n"})
    output = part["state"]["output"]
    assert output.startswith("Wrote file successfully.\n\nLSP errors detected in other files:\n"
                             f'<diagnostics file="{broken}">\nERROR [5:15]')
    assert part["state"]["metadata"]["diagnostics"][fine] == []


def test_a_file_no_server_handles_gets_no_diagnostics(alice, llm):
    session_id = new_session(alice)
    part = run_tool_call(alice, llm, session_id, "write", {"filePath": str(alice.repo / "notes.txt"),
                                                           "content": "compute_total('a', 2)\n"})
    assert part["state"]["output"] == "Wrote file successfully."
    assert part["state"]["metadata"]["diagnostics"] == {}
    assert alice.get("/lsp", params={"directory": str(alice.repo)}).json() == []
