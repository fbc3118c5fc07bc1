"""What a project's config file or an agent's own permissions allow, a ceiling still caps when the tool runs:
an `ask` ceiling asks, a `deny` ceiling keeps the tool from the model and fails any call it still makes, with
the policy named."""
import json

from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.policy.conftest import text_prompt, wait_idle, wait_until


def tool_parts(persona, session_id):
    return [p for m in persona.get(f"/session/{session_id}/message").json() for p in m["parts"]
            if p["type"] == "tool"]


def offered_tools(request) -> set[str]:
    return {tool["function"]["name"] for tool in request.body.get("tools") or []}


def test_an_agent_allowing_bash_still_asks_under_an_ask_ceiling(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    (alice.repo / "opencode.json").write_text(json.dumps({
        "permission": {"bash": "allow"}, "agent": {"build": {"permission": {"bash": "allow"}}}}))
    set_policy(permission_ceilings={"bash": "ask"})
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "echo ran", "description": "x"})]), Reply(text="done"))
    assert alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("go")).status_code == 204
    [request] = wait_until(lambda: alice.get("/permission").json())
    assert request["permission"] == "bash"
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "reject"})
    wait_idle(alice, session["id"])
    assert tool_parts(alice, session["id"])[0]["state"]["status"] == "error"


def test_an_always_approval_does_not_lift_an_ask_ceiling(alice, fake_llm, set_policy):
    from sessions_app.models import PermissionApproval

    configure_fake_provider(alice, fake_llm)
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    PermissionApproval.objects.create(owner=alice.user, project_id=alice.get(
        "/project/current", params={"directory": str(alice.repo)}).json()["id"], permission="bash", pattern="*")
    set_policy(permission_ceilings={"bash": "ask"})
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "echo ran", "description": "x"})]), Reply(text="done"))
    alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("go"))
    [request] = wait_until(lambda: alice.get("/permission").json())
    assert request["permission"] == "bash"
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "once"})
    wait_idle(alice, session["id"])
    assert "ran" in tool_parts(alice, session["id"])[0]["state"]["output"]


def test_a_denied_permission_fails_the_call_naming_the_policy(alice, fake_llm, set_policy, tmp_path):
    configure_fake_provider(alice, fake_llm)
    (alice.repo / "opencode.json").write_text(json.dumps({"permission": {"external_directory": "allow"}}))
    outside = alice.root / "outside.txt"
    outside.write_text("secret\n")
    set_policy(group="contractors", members=[alice], permission_ceilings={"external_directory": "deny"})
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    fake_llm.script(Reply(tool_calls=[("read", {"filePath": str(outside)})]), Reply(text="done"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go"))
    assert answer.status_code == 200, answer.text
    [part] = tool_parts(alice, session["id"])
    assert part["state"]["status"] == "error"
    assert "policy of group 'contractors'" in part["state"]["error"]
    assert "secret" not in json.dumps(part)


def test_a_denied_tool_is_not_offered_even_when_the_agent_and_the_prompt_allowed_it(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    (alice.repo / "opencode.json").write_text(json.dumps({
        "agent": {"build": {"permission": {"webfetch": "allow"}, "tools": {"webfetch": True}}}}))
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("x", tools={"webfetch": True}, noReply=True))
    fake_llm.script(Reply(text="before"), Reply(text="after"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("go"))
    set_policy(permission_ceilings={"webfetch": "deny"})
    alice.post(f"/session/{session['id']}/message", json=text_prompt("again"))
    before, after = [r for r in fake_llm.requests if "title generator" not in r.system_text]
    assert "webfetch" in offered_tools(before)
    assert "webfetch" not in offered_tools(after) and "read" in offered_tools(after)
