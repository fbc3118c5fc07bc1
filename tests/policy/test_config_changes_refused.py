"""A config change that would reach past the policy is refused naming the policy, and changes nothing: PATCH
/config on both mounts (the v2 one in both of its spellings) and the person's global config."""
import pytest

from tests.policy.conftest import refusal

CONTRACTORS = "policy of group 'contractors'"


@pytest.fixture
def capped(alice, set_policy):
    set_policy(permission_ceilings={"bash": "ask"})
    set_policy(group="contractors", members=[alice], permission_ceilings={"webfetch": "deny"}, max_steps=10,
               sharing_allowed=False, allowed_providers=["anthropic"], restrict_mcp=True,
               mcp_remote_urls=["https://mcp.example.com/"])


PATCHES = [
    ({"permission": {"bash": "allow"}}, "policy of everyone", "permission_ceilings"),
    ({"permission": {"bash": {"git *": "allow"}}}, "policy of everyone", "permission_ceilings"),
    ({"permission": {"webfetch": "ask"}}, CONTRACTORS, "permission_ceilings"),
    ({"agent": {"build": {"permission": {"bash": "allow"}}}}, "policy of everyone", "permission_ceilings"),
    ({"agent": {"mine": {"tools": {"webfetch": True}}}}, CONTRACTORS, "permission_ceilings"),
    ({"tools": {"bash": True}}, "policy of everyone", "permission_ceilings"),
    ({"agent": {"build": {"steps": 50}}}, CONTRACTORS, "max_steps"),
    ({"share": "auto"}, CONTRACTORS, "share"),
    ({"model": "openai/gpt-5"}, CONTRACTORS, "models"),
    ({"enabled_providers": ["openai"]}, CONTRACTORS, "providers"),
    ({"provider": {"homebrew": {"options": {"baseURL": "http://127.0.0.1:9/v1"}}}}, CONTRACTORS, "providers"),
    ({"mcp": {"evil": {"type": "remote", "url": "https://evil.example.net/mcp"}}}, CONTRACTORS, "mcp"),
]


@pytest.mark.parametrize("patch,policy,field", PATCHES)
def test_a_v2_config_patch_past_the_policy_is_refused_and_changes_nothing(alice, capped, patch, policy, field):
    params = {"directory": str(alice.repo)}
    before = alice.get("/api/config", params=params).json()
    data = refusal(alice.patch("/api/config", params=params, json={"config": patch}))
    assert (data["policy"], data["field"]) == (policy, field)
    assert alice.get("/api/config", params=params).json() == before


@pytest.mark.parametrize("patch,policy,field", PATCHES[:3])
def test_the_original_and_global_config_patches_are_refused_too(alice, capped, patch, policy, field):
    params = {"directory": str(alice.repo)}
    assert refusal(alice.patch("/config", params=params, json=patch))["policy"] == policy
    assert refusal(alice.patch("/api/config", params=params, json=patch))["policy"] == policy
    assert refusal(alice.patch("/global/config", json=patch))["policy"] == policy


def test_a_patch_within_the_policy_is_taken(alice, capped):
    params = {"directory": str(alice.repo)}
    answer = alice.patch("/api/config", params=params, json={"config": {
        "permission": {"bash": "deny", "webfetch": "deny"}, "agent": {"build": {"steps": 5}},
        "mcp": {"ok": {"type": "remote", "url": "https://mcp.example.com/x", "enabled": False}}}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["permission"]["bash"] == "deny"


def test_a_refusal_names_the_ceiling_in_its_message(alice, capped):
    data = refusal(alice.patch("/config", params={"directory": str(alice.repo)},
                               json={"permission": {"bash": "allow"}}))
    assert data["message"] == "Permission bash may not be allow: the policy of everyone requires at least ask"
    assert data["permission"] == "bash" and data["ceiling"] == "ask"
