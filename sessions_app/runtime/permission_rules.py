"""Permission rules (reference §5.5): `{permission, pattern, action}` from config, agent and session; the last
matching rule wins, no match asks. Pure functions, plus the user's remembered `always` approvals."""
from __future__ import annotations

import os
import re
from functools import lru_cache

from sessions_app.store.approvals import patterns_of

ACTIONS = ("allow", "ask", "deny")


@lru_cache(maxsize=2048)
def _pattern_regex(pattern: str) -> re.Pattern:
    escaped = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    # "git status *" also matches the bare "git status" (opencode's wildcard rule).
    if escaped.endswith(r"\ .*"):
        escaped = escaped[: -len(r"\ .*")] + r"(\ .*)?"
    return re.compile("^" + escaped + "$", re.DOTALL)


def wildcard_match(value: str, pattern: str) -> bool:
    return bool(_pattern_regex(pattern.replace("\\", "/")).match(value.replace("\\", "/")))


def _expand(pattern: str) -> str:
    home = os.path.expanduser("~")
    if pattern == "~" or pattern == "$HOME":
        return home
    if pattern.startswith("~/"):
        return home + pattern[1:]
    if pattern.startswith("$HOME/"):
        return home + pattern[5:]
    return pattern


def rules_from_config(permission) -> list[dict]:
    """`permission` config → rules: "ask" → everything; {"bash": "allow"} → pattern *; {"bash": {"git *":
    "allow"}} → one rule per pattern. Unknown actions are skipped rather than guessed."""
    if isinstance(permission, str):
        return [{"permission": "*", "pattern": "*", "action": permission}] if permission in ACTIONS else []
    if not isinstance(permission, dict):
        return []
    rules: list[dict] = []
    for key, value in permission.items():
        if isinstance(value, str):
            if value in ACTIONS:
                rules.append({"permission": key, "pattern": "*", "action": value})
        elif isinstance(value, dict):
            for pattern, action in value.items():
                if isinstance(pattern, str) and action in ACTIONS:
                    rules.append({"permission": key, "pattern": _expand(pattern), "action": action})
    return rules


def clean_rules(rules) -> list[dict]:
    """Keep only well-formed rules (sessions store client-supplied lists)."""
    out = []
    for rule in rules or []:
        if (isinstance(rule, dict) and isinstance(rule.get("permission"), str)
                and isinstance(rule.get("pattern"), str) and rule.get("action") in ACTIONS):
            out.append({"permission": rule["permission"], "pattern": rule["pattern"], "action": rule["action"]})
    return out


def matching_rule(rules: list[dict], permission: str, pattern: str) -> dict | None:
    for rule in reversed(rules):
        if wildcard_match(permission, rule["permission"]) and wildcard_match(pattern, rule["pattern"]):
            return rule
    return None


def evaluate(rules: list[dict], permission: str, pattern: str) -> str:
    rule = matching_rule(rules, permission, pattern)
    return rule["action"] if rule else "ask"


EDIT_TOOLS = ("edit", "write", "patch", "multiedit", "apply_patch")


def disabled_tools(tool_ids: list[str], rules: list[dict]) -> set[str]:
    """Tools whose permission is denied outright (last rule for it is `deny` on `*`): not offered to the model."""
    out = set()
    for tool_id in tool_ids:
        permission = "edit" if tool_id in EDIT_TOOLS else tool_id
        rule = next((r for r in reversed(rules) if wildcard_match(permission, r["permission"])), None)
        if rule and rule["pattern"] == "*" and rule["action"] == "deny":
            out.add(tool_id)
    return out


def approvals_of(*, owner_id: int, project_id: str) -> list[dict]:
    return [{"permission": p, "pattern": pat, "action": "allow"}
            for p, pat in patterns_of(owner_id=owner_id, project_id=project_id)]
