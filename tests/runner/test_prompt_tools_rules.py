"""session.prompt's `tools` map persists as session permission rules (opencode 1.18), merged with the
session's own rules (services/prompting.tools_as_session_rules)."""
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt


def test_a_disabled_tool_becomes_a_session_deny_rule(alice, llm, session_of):
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("x", tools={"bash": False}))
    stored = alice.get(f"/session/{session['id']}").json()
    assert stored["permission"] == [{"permission": "bash", "pattern": "*", "action": "deny"}]


def test_an_enabled_tool_becomes_an_allow_rule_replacing_the_deny(alice, llm, session_of):
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("x", tools={"bash": False, "read": False}))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("y", tools={"bash": True}))
    stored = alice.get(f"/session/{session['id']}").json()
    assert stored["permission"] == [{"permission": "read", "pattern": "*", "action": "deny"},
                                    {"permission": "bash", "pattern": "*", "action": "allow"}]


def test_a_no_reply_prompt_sets_the_rules_too(alice, llm, session_of):
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("note", noReply=True, tools={"edit": False}))
    stored = alice.get(f"/session/{session['id']}").json()
    assert stored["permission"] == [{"permission": "edit", "pattern": "*", "action": "deny"}]


def test_existing_session_rules_are_kept(alice, llm, session_of):
    session = session_of(permission=[{"permission": "webfetch", "pattern": "*", "action": "deny"}])
    alice.post(f"/session/{session['id']}/message", json=text_prompt("x", tools={"bash": False}))
    stored = alice.get(f"/session/{session['id']}").json()
    assert stored["permission"] == [{"permission": "webfetch", "pattern": "*", "action": "deny"},
                                    {"permission": "bash", "pattern": "*", "action": "deny"}]


def test_a_denied_tool_the_model_still_calls_is_unavailable(alice, llm, session_of):
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("x", tools={"bash": False}))
    llm.script(Reply(tool_calls=[("bash", {"command": "echo hi", "description": "hi"})]), Reply(text="ok"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("y")).json()
    assert answer["parts"][1]["text"] == "ok"
    tool = next(p for m in alice.get(f"/session/{session['id']}/message").json() for p in m["parts"]
                if p["type"] == "tool")
    # not offered, so the call goes to the `invalid` tool, whose result tells the model it is unavailable
    assert tool["tool"] == "invalid" and "unavailable tool 'bash'" in tool["state"]["output"]
