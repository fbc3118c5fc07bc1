"""`list` and `todoread` are in tool.ids: a model that calls them by name gets them run (they are not offered
in the tool list, as opencode 1.18 no longer offers them), under the agent's permission rules."""
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt


def tool_parts(persona, session_id):
    return [p for m in persona.get(f"/session/{session_id}/message").json() for p in m["parts"]
            if p["type"] == "tool"]


def test_list_and_todoread_are_advertised_and_run_when_called(alice, llm, session_of):
    ids = alice.get("/experimental/tool/ids").json()
    assert "list" in ids and "todoread" in ids
    session = session_of()
    (alice.repo / "pkg").mkdir()
    (alice.repo / "pkg" / "module.py").write_text("x = 1\n")
    todos = [{"content": "write the tests", "status": "pending", "priority": "high"}]
    llm.script(Reply(tool_calls=[("todowrite", {"todos": todos})]),
               Reply(tool_calls=[("list", {"path": str(alice.repo)}), ("todoread", {})]),
               Reply(text="done"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("look around"))
    assert answer.status_code == 200, answer.text
    parts = {p["tool"]: p for p in tool_parts(alice, session["id"])}
    assert set(parts) == {"todowrite", "list", "todoread"}
    assert parts["list"]["state"]["status"] == "completed", parts["list"]
    assert "module.py" in parts["list"]["state"]["output"] and "pkg/" in parts["list"]["state"]["output"]
    assert parts["todoread"]["state"]["status"] == "completed", parts["todoread"]
    assert "write the tests" in parts["todoread"]["state"]["output"]
    # Not offered in the model's tool list.
    model_call = next(r for r in llm.requests if "title generator" not in r.system_text.lower())
    offered = [t["function"]["name"] for t in model_call.body.get("tools", [])]
    assert "read" in offered and "list" not in offered and "todoread" not in offered


def test_a_rule_denying_them_still_applies(alice, llm, session_of):
    session = session_of(permission=[{"permission": "list", "pattern": "*", "action": "deny"}])
    llm.script(Reply(tool_calls=[("list", {})]), Reply(text="ok"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("list"))
    part = tool_parts(alice, session["id"])[0]
    assert part["tool"] == "list" and part["state"]["status"] == "error"
    assert "rule" in part["state"]["error"]
