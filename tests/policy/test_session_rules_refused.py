"""A prompt's `tools` and a session's own permission rules cannot loosen a ceiling: refused naming the
policy, nothing stored."""
from tests.fakes.fixtures import configure_fake_provider
from tests.policy.conftest import refusal, text_prompt


def test_a_prompt_turning_on_a_capped_tool_is_refused(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    set_policy(permission_ceilings={"bash": "ask", "webfetch": "deny"})
    params = {"directory": str(alice.repo)}
    session = alice.post("/session", params=params, json={}).json()
    for tools, permission in (({"bash": True}, "bash"), ({"read": False, "webfetch": True}, "webfetch")):
        data = refusal(alice.post(f"/session/{session['id']}/message", params=params,
                                  json=text_prompt("x", tools=tools)))
        assert data["permission"] == permission and data["policy"] == "policy of everyone"
    assert alice.get(f"/session/{session['id']}/message", params=params).json() == []
    assert alice.get(f"/session/{session['id']}", params=params).json().get("permission") in (None, [])


def test_a_prompt_turning_tools_off_is_taken(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    set_policy(permission_ceilings={"bash": "ask"})
    params = {"directory": str(alice.repo)}
    session = alice.post("/session", params=params, json={}).json()
    answer = alice.post(f"/session/{session['id']}/message", params=params,
                        json=text_prompt("x", tools={"bash": False}, noReply=True))
    assert answer.status_code == 200, answer.text


def test_session_rules_looser_than_a_ceiling_are_refused_on_create_and_update(alice, set_policy):
    set_policy(group="contractors", members=[alice], permission_ceilings={"bash": "deny"})
    params = {"directory": str(alice.repo)}
    allow_bash = [{"permission": "bash", "pattern": "git *", "action": "ask"}]
    data = refusal(alice.post("/session", params=params, json={"permission": allow_bash}))
    assert data["policy"] == "policy of group 'contractors'"
    assert alice.get("/session", params=params).json() == []
    session = alice.post("/session", params=params, json={}).json()
    refusal(alice.patch(f"/session/{session['id']}", params=params, json={"permission": allow_bash}))
