from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle


def test_the_task_tool_runs_a_child_session(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("task", {"description": "look around", "prompt": "list files",
                                           "subagent_type": "general"})]),
               Reply(text="child says hello"),
               Reply(text="parent done"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("delegate")).json()
    assert answer["parts"][1]["text"] == "parent done"
    children = alice.get(f"/session/{session['id']}/children").json()
    assert len(children) == 1
    child = children[0]
    assert child["parentID"] == session["id"] and child["title"] == "look around (@general subagent)"
    child_messages = alice.get(f"/session/{child['id']}/message").json()
    assert [m["info"]["role"] for m in child_messages] == ["user", "assistant"]
    assert child_messages[1]["info"]["agent"] == "general"
    tool_step = alice.get(f"/session/{session['id']}/message").json()[1]
    part = next(p for p in tool_step["parts"] if p["type"] == "tool")
    assert part["tool"] == "task" and part["state"]["status"] == "completed"
    assert "child says hello" in part["state"]["output"]
    assert part["state"]["metadata"]["sessionId"] == child["id"]
    wait_idle(alice, child["id"])


def test_a_subtask_part_runs_before_the_model(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="subagent result"), Reply(text="summary of it"))
    body = {"parts": [{"type": "subtask", "prompt": "investigate", "description": "investigate it",
                       "agent": "explore"}]}
    answer = alice.post(f"/session/{session['id']}/message", json=body).json()
    assert answer["parts"][-2]["text"] == "summary of it"
    messages = alice.get(f"/session/{session['id']}/message").json()
    task_message = messages[1]
    part = task_message["parts"][0]
    assert part["tool"] == "task" and part["state"]["status"] == "completed"
    assert "subagent result" in part["state"]["output"]
    assert answer["info"]["parentID"] == task_message["info"]["parentID"] == messages[0]["info"]["id"]


def test_an_agent_part_adds_the_task_hint(alice, llm, session_of):
    session = session_of()
    body = {"parts": [{"type": "text", "text": "@explore find it"}, {"type": "agent", "name": "explore"}]}
    alice.post(f"/session/{session['id']}/message", json=body)
    parts = alice.get(f"/session/{session['id']}/message").json()[0]["parts"]
    assert [p["type"] for p in parts] == ["text", "agent", "text"]
    assert parts[2]["synthetic"] and "subagent: explore" in parts[2]["text"]
