"""The policy as the config's last layer raises what a config says and never adds a rule that would loosen a
built-in agent's own (the runtime applies the ceilings after every rule in any case)."""
from policy_app.config_layer import apply_policy
from policy_app.rules import EVERYONE, EffectivePolicy, Scope
from sessions_app.runtime.agents import agent_get
from sessions_app.runtime.permission_rules import evaluate


def test_the_plan_agent_still_denies_edits_under_an_ask_ceiling():
    policy = EffectivePolicy((Scope(EVERYONE, permission_ceilings={"edit": "ask", "bash": "ask"}),))
    config = apply_policy({"permission": {"bash": "allow"}}, policy)
    assert config["permission"] == {"bash": "ask"}
    assert evaluate(agent_get(config, "plan")["permission"], "edit", "a.py") == "deny"
    assert evaluate(agent_get(config, "build")["permission"], "bash", "ls") == "ask"


def test_a_stricter_later_rule_is_not_outranked():
    policy = EffectivePolicy((Scope(EVERYONE, permission_ceilings={"bash": "ask"}),))
    config = apply_policy({"permission": {"bash": "allow", "*": "deny"}}, policy)
    assert list(config["permission"]) == ["bash", "*"]
    assert evaluate(agent_get(config, "build")["permission"], "bash", "ls") == "deny"


def test_rules_of_a_capped_permission_are_raised_pattern_by_pattern():
    policy = EffectivePolicy((Scope(EVERYONE, permission_ceilings={"bash": "ask"}),))
    config = apply_policy({"permission": {"bash": {"*": "allow", "rm *": "deny"}}}, policy)
    assert config["permission"]["bash"] == {"*": "ask", "rm *": "deny"}


def test_without_a_policy_the_config_is_untouched():
    config = {"permission": {"bash": "allow"}, "model": "x/y", "share": "auto"}
    assert apply_policy(dict(config), EffectivePolicy(())) == config
