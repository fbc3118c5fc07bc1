"""A project's opencode.json that tries every way around a ceiling at once: its own permission, a built-in
agent's, a custom agent's and a legacy mode's permissions and `tools`, a custom provider, a refused model and
small model, auto sharing, an MCP server, a step count. None gets past: GET /config shows each one capped, and
the custom agent's bash call still asks."""
import json

from tests.fakes.fixtures import Reply, configure_fake_provider, fake_provider_config
from tests.policy.conftest import text_prompt, wait_idle, wait_until

EVERY_WAY = {
    "permission": {"bash": "allow"},
    "tools": {"bash": True},
    "agent": {"build": {"permission": {"bash": {"*": "allow"}}},
              "sneaky": {"mode": "primary", "permission": {"bash": "allow"}, "tools": {"bash": True}, "steps": 999}},
    "mode": {"old": {"permission": {"bash": "allow"}, "tools": {"bash": True}}},
    "model": "sideload/fake-model",
    "small_model": "sideload/fake-model",
    "share": "auto",
    "mcp": {"anything": {"type": "local", "command": ["some-server"]}},
}


def test_a_project_config_trying_every_way_gets_past_no_ceiling(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    (alice.repo / "opencode.json").write_text(json.dumps({**EVERY_WAY, "provider": {
        "sideload": fake_provider_config(fake_llm)}}))
    set_policy(allowed_providers=["fake"], permission_ceilings={"bash": "ask"}, sharing_allowed=False,
               restrict_mcp=True, max_steps=5)
    params = {"directory": str(alice.repo)}
    config = alice.get("/config", params=params).json()
    assert config["permission"]["bash"] == "ask" and "bash" not in config["tools"]
    assert config["agent"]["build"]["permission"]["bash"] == {"*": "ask"}
    sneaky = config["agent"]["sneaky"]
    assert sneaky["permission"]["bash"] == "ask" and "bash" not in sneaky["tools"] and sneaky["steps"] == 5
    assert config["mode"]["old"]["permission"]["bash"] == "ask"
    assert "sideload" not in config["provider"] and "model" not in config and "small_model" not in config
    assert config["share"] == "disabled" and config["mcp"]["anything"]["enabled"] is False

    session = alice.post("/session", params=params, json={}).json()
    assert session.get("share") is None
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "echo ran", "description": "x"})]), Reply(text="done"))
    alice.post(f"/session/{session['id']}/prompt_async", params=params, json=text_prompt(
        "go", agent="sneaky", model={"providerID": "fake", "modelID": "fake-model"}))
    [request] = wait_until(lambda: alice.get("/permission").json())
    assert request["permission"] == "bash"
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "reject"})
    wait_idle(alice, session["id"])
