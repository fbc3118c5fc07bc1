"""GET /config (both mounts) is the effective config: the organization's policy is its last layer, over the
person's, the project's and the project file's settings."""
import json

from tests.fakes.fixtures import configure_fake_provider


def test_the_effective_config_carries_every_setting_of_the_policy(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    (alice.repo / "opencode.json").write_text(json.dumps({
        "share": "auto", "permission": {"bash": {"*": "allow", "git *": "allow"}, "webfetch": "allow", "edit": "deny"},
        "agent": {"build": {"permission": {"bash": "allow"}, "tools": {"webfetch": True}, "steps": 100}},
        "mcp": {"anything": {"type": "local", "command": ["some-server"]}},
    }))
    set_policy(allowed_providers=["fake", "anthropic"], default_model="fake/fake-model", max_steps=7,
               permission_ceilings={"bash": "ask", "webfetch": "deny"}, sharing_allowed=False, restrict_mcp=True)
    config = alice.get("/config", params={"directory": str(alice.repo)}).json()
    assert config["enabled_providers"] == ["anthropic", "fake"]
    assert config["model"] == "fake/fake-model"
    assert config["permission"]["bash"] == {"*": "ask", "git *": "ask"} and config["permission"]["webfetch"] == "deny"
    assert config["permission"]["edit"] == "deny"  # stricter than any ceiling: kept
    build = config["agent"]["build"]
    assert build["permission"]["bash"] == "ask" and build["tools"]["webfetch"] is False and build["steps"] == 7
    assert config["share"] == "disabled"
    assert config["mcp"]["anything"]["enabled"] is False
    v2 = alice.get("/api/config", params={"directory": str(alice.repo)}).json()
    assert v2["permission"]["webfetch"] == "deny"


def test_without_a_policy_the_config_is_the_persons_own(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    (alice.repo / "opencode.json").write_text(json.dumps({"permission": {"bash": "allow"}}))
    config = alice.get("/config", params={"directory": str(alice.repo)}).json()
    assert config["permission"] == {"bash": "allow"} and "enabled_providers" not in config


def test_a_groups_policy_applies_only_to_its_members(alice, bob, set_policy):
    set_policy(group="contractors", members=[bob], permission_ceilings={"bash": "deny"})
    for persona in (alice, bob):
        (persona.repo / "opencode.json").write_text(json.dumps({"permission": {"bash": "allow"}}))
    mine = alice.get("/config", params={"directory": str(alice.repo)}).json()
    theirs = bob.get("/config", params={"directory": str(bob.repo)}).json()
    assert mine["permission"]["bash"] == "allow"
    assert theirs["permission"]["bash"] == "deny"
