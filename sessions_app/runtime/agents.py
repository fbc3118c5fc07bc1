"""Agents (reference §3.7, opencode 1.18 `agent/agent.ts`): the built-in ones plus those of the config's
`agent` map (and the legacy `mode` map), each with a mode, a permission ruleset, a prompt and options."""
from __future__ import annotations

import copy

from agentserver.errors import BadRequest
from sessions_app.runtime.permission_rules import rules_from_config

EXPLORE_PROMPT = (
    "You are a file search specialist. You excel at thoroughly navigating and exploring codebases.\n\n"
    "Your strengths:\n- Rapidly finding files using glob patterns\n- Searching code and text with powerful "
    "regex patterns\n- Reading and analyzing file contents\n\nGuidelines:\n- Use Glob for broad file pattern "
    "matching\n- Use Grep for searching file contents with regex\n- Use Read when you know the specific file "
    "path you need to read\n- Use Bash for file operations like listing directory contents\n- Adapt your "
    "search approach based on the thoroughness level specified by the caller\n- Return file paths as absolute "
    "paths in your final response\n- Do not create any files, or run bash commands that modify the user's "
    "system state in any way\n\nComplete the user's search request efficiently and report your findings clearly."
)
COMPACTION_PROMPT = (
    "You are a context summarization agent. You are given a conversation between a user and an agent. Your "
    "goal is to produce a structured summary so another coding agent can continue the work.\n\n"
    "Always follow the exact structure below:\n\n## Goal\n## Instructions\n## Discoveries\n## Accomplished\n"
    "## Relevant files / directories\n\nBe precise: keep file paths, commands, decisions and open questions."
)
TITLE_PROMPT = (
    "You are a title generator. You output ONLY a thread title. Nothing else.\n\n"
    "Generate a brief title (at most 50 characters) that would help the user find this conversation later. "
    "Use the same language as the user message. Never explain, never use tools, no quotes or trailing period."
)
SUMMARY_PROMPT = (
    "Summarize what was done in this conversation. Write it like a pull request description: two or three "
    "sentences, focused on what changed and why. Do not mention tool calls; use the first person."
)

DESCRIPTIONS = {
    "build": "The default agent. Executes tools based on configured permissions.",
    "plan": "Plan mode. Disallows all edit tools.",
    "general": ("General-purpose agent for researching complex questions and executing multi-step tasks. "
                "Use this agent to execute multiple units of work in parallel."),
    "explore": ('Fast agent specialized for exploring codebases. Use this when you need to quickly find files by '
                'patterns (eg. "src/components/**/*.tsx"), search code for keywords (eg. "API endpoints"), or '
                'answer questions about the codebase (eg. "how do API endpoints work?"). When calling this agent, '
                'specify the desired thoroughness level: "quick" for basic searches, "medium" for moderate '
                'exploration, or "very thorough" for comprehensive analysis across multiple locations and naming '
                'conventions.'),
}

EDIT_TOOL_IDS = ("edit", "write", "patch", "multiedit", "apply_patch")


def default_rules() -> list[dict]:
    return rules_from_config({
        "*": "allow",
        "doom_loop": "ask",
        "external_directory": {"*": "ask"},
        "question": "deny",
        "plan_enter": "deny",
        "plan_exit": "deny",
        # .env files hold secrets: reading them asks (mirrors Node.gitignore's .env patterns).
        "read": {"*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow"},
    })


def _tools_to_rules(tools) -> list[dict]:
    """Legacy `tools: {bash: false}` → deny rules (edit-family tools map to the `edit` permission)."""
    rules = []
    if isinstance(tools, dict):
        for tool_id, enabled in tools.items():
            if not isinstance(tool_id, str) or not isinstance(enabled, bool):
                continue
            permission = "edit" if tool_id in EDIT_TOOL_IDS else tool_id
            rules.append({"permission": permission, "pattern": "*", "action": "allow" if enabled else "deny"})
    return rules


def parse_model(value) -> dict | None:
    if isinstance(value, str) and "/" in value:
        provider_id, model_id = value.split("/", 1)
        if provider_id and model_id:
            return {"providerID": provider_id, "modelID": model_id}
    return None


def _builtins(user_rules: list[dict]) -> dict[str, dict]:
    base = default_rules()

    def rules(extra: dict) -> list[dict]:
        return base + rules_from_config(extra) + user_rules

    def agent(name: str, mode: str, permission: list[dict], **extra) -> dict:
        out = {"name": name, "mode": mode, "native": True, "permission": permission, "options": {}}
        if name in DESCRIPTIONS:
            out["description"] = DESCRIPTIONS[name]
        out.update(extra)
        return out

    return {
        "build": agent("build", "primary", rules({"question": "allow", "plan_enter": "allow"})),
        "plan": agent("plan", "primary", rules({
            "question": "allow", "plan_exit": "allow",
            "edit": {"*": "deny", ".opencode/plans/*.md": "allow"},
        })),
        "general": agent("general", "subagent", rules({"todowrite": "deny", "todoread": "deny"})),
        "explore": agent("explore", "subagent", rules({
            "*": "deny", "grep": "allow", "glob": "allow", "list": "allow", "bash": "allow", "webfetch": "allow",
            "websearch": "allow", "codesearch": "allow", "read": "allow", "skill": "allow",
            "external_directory": {"*": "ask"},
        }), prompt=EXPLORE_PROMPT),
        "compaction": agent("compaction", "primary", rules({"*": "deny"}), hidden=True, prompt=COMPACTION_PROMPT),
        "title": agent("title", "primary", rules({"*": "deny"}), hidden=True, temperature=0.5, prompt=TITLE_PROMPT),
        "summary": agent("summary", "primary", rules({"*": "deny"}), hidden=True, prompt=SUMMARY_PROMPT),
    }


def _apply_config(agents: dict[str, dict], name: str, value: dict, user_rules: list[dict], *,
                  default_mode: str) -> None:
    if value.get("disable") is True:
        agents.pop(name, None)
        return
    item = agents.get(name)
    if item is None:
        item = agents[name] = {"name": name, "mode": default_mode, "native": False,
                               "permission": default_rules() + user_rules, "options": {}}
    model = parse_model(value.get("model"))
    if model:
        item["model"] = model
    for key, target in (("prompt", "prompt"), ("description", "description"), ("color", "color"),
                        ("variant", "variant")):
        if isinstance(value.get(key), str):
            item[target] = value[key]
    for key, target in (("temperature", "temperature"), ("top_p", "topP")):
        if isinstance(value.get(key), (int, float)) and not isinstance(value.get(key), bool):
            item[target] = value[key]
    if value.get("mode") in ("primary", "subagent", "all"):
        item["mode"] = value["mode"]
    if isinstance(value.get("hidden"), bool):
        item["hidden"] = value["hidden"]
    steps = value.get("steps", value.get("maxSteps"))
    if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0:
        item["steps"] = steps
    if isinstance(value.get("options"), dict):
        item["options"] = {**item["options"], **copy.deepcopy(value["options"])}
    item["permission"] = (item["permission"] + _tools_to_rules(value.get("tools"))
                          + rules_from_config(value.get("permission") or {}))


def _agents(config: dict) -> dict[str, dict]:
    config = config or {}
    user_rules = rules_from_config(config.get("permission") or {}) + _tools_to_rules(config.get("tools"))
    agents = _builtins(user_rules)
    for source, default_mode in (("mode", "primary"), ("agent", "all")):
        entries = config.get(source)
        if isinstance(entries, dict):
            for name, value in entries.items():
                if isinstance(name, str) and isinstance(value, dict):
                    _apply_config(agents, name, value, user_rules, default_mode=default_mode)
    return agents


def default_agent_name(config: dict) -> str:
    agents = _agents(config)
    wanted = (config or {}).get("default_agent")
    if isinstance(wanted, str) and wanted in agents:
        agent = agents[wanted]
        if agent["mode"] != "subagent" and not agent.get("hidden"):
            return wanted
    for agent in agents.values():
        if agent["mode"] != "subagent" and not agent.get("hidden"):
            return agent["name"]
    return "build"


def agent_list(config: dict) -> list[dict]:
    """GET /agent: the default agent first, then by name (as 1.18 sorts)."""
    default = default_agent_name(config)
    agents = list(_agents(config).values())
    return sorted(agents, key=lambda a: (a["name"] != default, a["name"]))


def agent_get(config: dict, name: str) -> dict:
    agent = _agents(config).get(name)
    if agent is None:
        raise BadRequest(f"Agent not found: {name}", kind="Body")
    return agent


def agent_rules(config: dict, name: str) -> list[dict]:
    return agent_get(config, name)["permission"]


def agent_v2(agent: dict) -> dict:
    """v2 `AgentV2Info`: permissions as {action, resource, effect}."""
    out = {"id": agent["name"], "request": {"headers": {}, "body": {}}}
    if agent.get("prompt"):
        out["system"] = agent["prompt"]
    if agent.get("description"):
        out["description"] = agent["description"]
    out["mode"] = agent["mode"]
    out["hidden"] = bool(agent.get("hidden"))
    out["permissions"] = [{"action": r["permission"], "resource": r["pattern"], "effect": r["action"]}
                          for r in agent["permission"]]
    if agent.get("model"):
        out["model"] = agent["model"]
    return out


def agent_list_v2(config: dict) -> list[dict]:
    return [agent_v2(a) for a in _agents(config).values()]


def session_ruleset(config: dict, agent_name: str, session_permission) -> list[dict]:
    """What a tool call in a session is evaluated against: the agent's rules (config rules included),
    then the session's own rules (e.g. a prompt's `tools: {bash: false}`, a child session's denials)."""
    from sessions_app.runtime.permission_rules import clean_rules

    return agent_rules(config, agent_name) + clean_rules(session_permission)
