"""How the policies that apply to one person combine: the strictest wins, setting by setting, and each answer
names the policy that decided it."""
from policy_app.rules import EVERYONE, EffectivePolicy, Scope


def group(name: str, **fields) -> Scope:
    return Scope(name=f"policy of group '{name}'", group=name, **fields)


def test_the_strictest_ceiling_wins_and_names_its_group():
    policy = EffectivePolicy((Scope(EVERYONE, permission_ceilings={"bash": "ask"}),
                              group("contractors", permission_ceilings={"bash": "deny", "edit": "ask"}),
                              group("staff", permission_ceilings={"bash": "allow"})))
    assert (policy.ceiling("bash").value, policy.ceiling("bash").by) == ("deny", "policy of group 'contractors'")
    assert policy.ceiling("edit").value == "ask"
    assert policy.ceiling("read") is None


def test_a_wildcard_ceiling_covers_every_permission_it_matches():
    policy = EffectivePolicy((Scope(EVERYONE, permission_ceilings={"*": "ask", "web*": "deny"}),))
    assert policy.ceiling("read").value == "ask"
    assert policy.ceiling("webfetch").value == "deny" and policy.ceiling("websearch").value == "deny"


def test_allowed_providers_are_the_intersection_of_every_list():
    policy = EffectivePolicy((Scope(EVERYONE, allowed_providers=("anthropic", "openai")),
                              group("eu", allowed_providers=("openai", "mistral"))))
    assert policy.provider_refused_by("openai") is None
    assert policy.provider_refused_by("anthropic") == "policy of group 'eu'"
    assert policy.provider_refused_by("mistral") == EVERYONE


def test_a_model_must_match_a_pattern_of_every_scope_that_lists_models():
    policy = EffectivePolicy((Scope(EVERYONE, allowed_models=("anthropic/*",)),
                              group("cheap", allowed_models=("*/claude-haiku-*", "openai/gpt-5-mini"))))
    assert policy.model_refused_by("anthropic", "claude-haiku-4-5") is None
    assert policy.model_refused_by("anthropic", "claude-opus-4") == "policy of group 'cheap'"
    assert policy.model_refused_by("openai", "gpt-5-mini") == EVERYONE


def test_sharing_refused_anywhere_is_refused():
    policy = EffectivePolicy((Scope(EVERYONE, sharing_allowed=True), group("contractors", sharing_allowed=False)))
    assert (policy.sharing().value, policy.sharing().by) == (False, "policy of group 'contractors'")
    assert EffectivePolicy((Scope(EVERYONE),)).sharing() is None


def test_the_smallest_step_limit_wins():
    policy = EffectivePolicy((Scope(EVERYONE, max_steps=50), group("trial", max_steps=5), group("x", max_steps=9)))
    assert (policy.max_steps().value, policy.max_steps().by) == (5, "policy of group 'trial'")


def test_the_default_model_is_a_groups_first_by_name_then_everyones_and_never_a_refused_one():
    everyone = Scope(EVERYONE, default_model="anthropic/claude-sonnet-4", allowed_providers=("anthropic", "openai"))
    assert EffectivePolicy((everyone,)).default_model().value == "anthropic/claude-sonnet-4"
    both = EffectivePolicy((everyone, group("zeta", default_model="openai/gpt-5"),
                            group("alpha", default_model="anthropic/claude-haiku-4-5")))
    assert (both.default_model().value, both.default_model().by) == ("anthropic/claude-haiku-4-5",
                                                                     "policy of group 'alpha'")
    refused = EffectivePolicy((everyone, group("alpha", default_model="mistral/large")))
    assert refused.default_model().value == "anthropic/claude-sonnet-4"


def test_mcp_allowlists_match_whole_words_and_url_boundaries():
    policy = EffectivePolicy((Scope(EVERYONE, restrict_mcp=True, mcp_local_commands=("uvx mcp-server-git",),
                                    mcp_remote_urls=("https://mcp.example.com",)),))
    assert policy.mcp_refused_by({"type": "local", "command": ["uvx", "mcp-server-git", "--repo", "."]}) is None
    assert policy.mcp_refused_by({"type": "local", "command": ["uvx", "mcp-server-gitevil"]}) == EVERYONE
    assert policy.mcp_refused_by({"type": "local", "command": "uvx", "arguments": ["mcp-server-git"]}) is None
    assert policy.mcp_refused_by({"type": "remote", "url": "https://mcp.example.com/sse"}) is None
    assert policy.mcp_refused_by({"type": "remote", "url": "https://mcp.example.com.evil.net/"}) == EVERYONE


def test_mcp_unrestricted_allows_any_server_and_restricted_with_no_list_allows_none():
    assert EffectivePolicy((Scope(EVERYONE),)).mcp_refused_by({"type": "local", "command": ["x"]}) is None
    assert EffectivePolicy((Scope(EVERYONE, restrict_mcp=True),)).mcp_refused_by(
        {"type": "local", "command": ["x"]}) == EVERYONE


def test_the_summary_says_which_policy_decided_each_setting():
    policy = EffectivePolicy((Scope(EVERYONE, permission_ceilings={"bash": "ask"}, max_steps=20),
                              group("contractors", permission_ceilings={"bash": "deny"}, sharing_allowed=False)))
    rows = {row["setting"]: (row["value"], row["by"]) for row in policy.summary()}
    assert rows["Permission bash"] == ("at least deny", "policy of group 'contractors'")
    assert rows["Sharing sessions"] == ("not allowed", "policy of group 'contractors'")
    assert rows["Most steps per turn"] == ("20", EVERYONE)
