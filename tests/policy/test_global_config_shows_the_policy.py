"""GET /global/config is the person's global layer with the policy applied last, as GET /config is: what they
wrote before a policy, or what a stricter group's policy overrides, is shown as it will apply."""
from tests.fakes.fixtures import configure_fake_provider


def test_the_global_config_carries_the_policy_over_what_the_person_wrote(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    written = alice.patch("/global/config", json={
        "share": "auto", "model": "anthropic/claude-opus-4-1", "permission": {"bash": "allow", "edit": "deny"},
        "agent": {"build": {"permission": {"webfetch": "allow"}, "steps": 50}},
        "mcp": {"anything": {"type": "local", "command": ["some-server"]}}})
    assert written.status_code == 200, written.text
    set_policy(group="contractors", members=[alice], allowed_providers=["fake"], default_model="fake/fake-model",
               permission_ceilings={"bash": "ask", "webfetch": "deny"}, sharing_allowed=False, restrict_mcp=True,
               max_steps=5)
    config = alice.get("/global/config").json()
    assert config["enabled_providers"] == ["fake"]
    assert config["model"] == "fake/fake-model"
    assert config["permission"] == {"bash": "ask", "edit": "deny"}
    assert config["agent"]["build"] == {"permission": {"webfetch": "deny"}, "steps": 5}
    assert config["share"] == "disabled"
    assert config["mcp"]["anything"]["enabled"] is False


def test_the_global_config_applies_only_the_persons_own_policy(alice, bob, set_policy):
    for persona in (alice, bob):
        assert persona.patch("/global/config", json={"permission": {"bash": "allow"}}).status_code == 200
    set_policy(group="contractors", members=[bob], permission_ceilings={"bash": "deny"})
    assert alice.get("/global/config").json()["permission"] == {"bash": "allow"}
    assert bob.get("/global/config").json()["permission"] == {"bash": "deny"}


def test_writing_back_what_the_global_config_shows_is_accepted(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    assert alice.patch("/global/config", json={"permission": {"bash": "allow"}}).status_code == 200
    set_policy(allowed_providers=["fake"], permission_ceilings={"bash": "ask"})
    shown = alice.get("/global/config").json()
    again = alice.patch("/global/config", json={"permission": shown["permission"],
                                                "enabled_providers": shown["enabled_providers"]})
    assert again.status_code == 200, again.text
    assert again.json()["permission"] == {"bash": "ask"}


def test_the_v2_provider_routes_list_and_give_only_allowed_providers(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    params = {"directory": str(alice.repo)}
    assert alice.get("/api/provider/fake", params=params).status_code == 200
    set_policy(allowed_providers=["anthropic"])
    assert [p["id"] for p in alice.get("/api/provider", params=params).json()["data"]] == []
    gone = alice.get("/api/provider/fake", params=params)
    assert gone.status_code == 404 and gone.json()["name"] == "NotFoundError"
    assert alice.get("/api/model", params=params).json()["data"] == []
    assert "fake" not in {p["id"] for p in alice.get("/provider", params=params).json()["all"]}
