from sessions_app.runtime.agents import agent_get
from sessions_app.services.permissions import disabled_tools, evaluate, rules_from_config, wildcard_match


def test_the_last_matching_rule_wins():
    rules = rules_from_config({"*": "allow", "bash": {"*": "ask", "git status *": "allow", "rm *": "deny"}})
    assert evaluate(rules, "read", "/x") == "allow"
    assert evaluate(rules, "bash", "ls -la") == "ask"
    assert evaluate(rules, "bash", "git status --short") == "allow"
    assert evaluate(rules, "bash", "git status") == "allow"
    assert evaluate(rules, "bash", "rm -rf /") == "deny"


def test_no_matching_rule_means_ask():
    assert evaluate([], "edit", "a.txt") == "ask"


def test_a_string_config_applies_to_every_permission():
    assert rules_from_config("deny") == [{"permission": "*", "pattern": "*", "action": "deny"}]
    assert rules_from_config({"edit": "bogus"}) == []


def test_wildcards_span_directories():
    assert wildcard_match("/home/a/b/.env", "*.env")
    assert wildcard_match("/etc/hostname", "/etc/*")
    assert not wildcard_match("/etcetera/x", "/etc/*")


def test_the_plan_agent_denies_edits_and_build_allows_them():
    assert evaluate(agent_get({}, "plan")["permission"], "edit", "src/a.py") == "deny"
    assert evaluate(agent_get({}, "build")["permission"], "edit", "src/a.py") == "allow"
    assert evaluate(agent_get({}, "build")["permission"], "read", "/r/.env") == "ask"


def test_config_rules_come_after_the_agent_defaults():
    config = {"permission": {"edit": "ask", "bash": {"*": "ask"}}}
    rules = agent_get(config, "build")["permission"]
    assert evaluate(rules, "edit", "x") == "ask"


def test_a_tool_denied_outright_is_not_offered():
    rules = agent_get({}, "explore")["permission"]
    assert disabled_tools(["read", "edit", "write", "bash", "todowrite"], rules) == {"edit", "write", "todowrite"}
