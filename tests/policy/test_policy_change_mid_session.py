"""A session made before the policy changed obeys the new policy from its next step: the policy is read at
each prompt, each step and each permission check."""
from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.policy.conftest import refusal, text_prompt, wait_idle, wait_until


def test_a_session_made_before_the_policy_is_refused_its_model_at_the_next_prompt(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    fake_llm.script(Reply(text="first"))
    assert alice.post(f"/session/{session['id']}/message", json=text_prompt("one")).status_code == 200
    set_policy(allowed_models=["anthropic/*"])
    data = refusal(alice.post(f"/session/{session['id']}/message", json=text_prompt("two")))
    assert data["field"] == "models" and "fake/fake-model" in data["message"]


def test_a_model_refused_during_a_turn_ends_it_before_the_next_step(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    alice.patch("/config", params={"directory": str(alice.repo)}, json={"permission": {"bash": "ask"}})
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "echo ran", "description": "x"})]),
                    Reply(text="must not be asked for"))
    alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("go"))
    [request] = wait_until(lambda: alice.get("/permission").json())
    set_policy(allowed_models=["anthropic/*"])
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "once"})
    wait_idle(alice, session["id"])
    assert fake_llm.pending == 1
    last = alice.get(f"/session/{session['id']}/message").json()[-1]["info"]
    assert "policy of everyone" in last["error"]["data"]["message"]


def test_a_step_limit_set_during_a_turn_makes_the_next_step_the_last(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    alice.patch("/config", params={"directory": str(alice.repo)}, json={"permission": {"bash": "ask"}})
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "echo ran", "description": "x"})]),
                    Reply(text="summary"))
    alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("go"))
    [request] = wait_until(lambda: alice.get("/permission").json())
    set_policy(max_steps=2)
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "once"})
    wait_idle(alice, session["id"])
    first, second = [r for r in fake_llm.requests if "title generator" not in r.system_text]
    assert first.body.get("tools") and not second.body.get("tools")
    assert "MAXIMUM STEPS REACHED" in second.last_user_text


def test_a_ceiling_set_while_a_permission_is_pending_applies_to_the_next_call(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "echo one", "description": "x"})]),
                    Reply(tool_calls=[("bash", {"command": "echo two", "description": "x"})]), Reply(text="end"))
    set_policy(permission_ceilings={"bash": "ask"})
    alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("go"))
    [request] = wait_until(lambda: alice.get("/permission").json())
    set_policy(permission_ceilings={"bash": "deny"})
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "once"})
    wait_idle(alice, session["id"])
    # the second step was not offered bash: its call went to `invalid`
    steps = [r for r in fake_llm.requests if "title generator" not in r.system_text]
    assert "bash" in {t["function"]["name"] for t in steps[0].body.get("tools") or []}
    assert "bash" not in {t["function"]["name"] for t in steps[1].body.get("tools") or []}
