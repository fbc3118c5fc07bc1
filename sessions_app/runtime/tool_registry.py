"""The tool registry: every tool by id, and the dynamic ones (MCP servers', websearch). `tools_for()` is what
the runner offers a model; GET /experimental/tool lists the same. It lives beside the tools' package, not in
its `__init__`: the tools import their package's modules, and a registry in `__init__` importing every tool
would make each of them import itself through the package."""
from __future__ import annotations

import logging
from collections.abc import Callable

from sessions_app.runtime.tools.apply_patch import ApplyPatchTool
from sessions_app.runtime.tools.base import Tool
from sessions_app.runtime.tools.bash import BashTool
from sessions_app.runtime.tools.edit import EditTool
from sessions_app.runtime.tools.glob import GlobTool
from sessions_app.runtime.tools.grep import GrepTool
from sessions_app.runtime.tools.invalid import InvalidTool
from sessions_app.runtime.tools.ls import ListTool
from sessions_app.runtime.tools.question import QuestionTool
from sessions_app.runtime.tools.read import ReadTool
from sessions_app.runtime.tools.skill import SkillTool
from sessions_app.runtime.tools.task import TaskTool
from sessions_app.runtime.tools.todo import TodoReadTool, TodoWriteTool
from sessions_app.runtime.tools.webfetch import WebFetchTool
from sessions_app.runtime.tools.write import WriteTool

# Order as opencode 1.18 lists them (GET /experimental/tool/ids), then `list` and `todoread`, which older
# clients and stored sessions still name.
REGISTRY: dict[str, Tool] = {tool.id: tool for tool in (
    InvalidTool(), QuestionTool(), BashTool(), ReadTool(), GlobTool(), GrepTool(), EditTool(), WriteTool(),
    TaskTool(), WebFetchTool(), TodoWriteTool(), SkillTool(), ApplyPatchTool(), ListTool(), TodoReadTool(),
)}

# Not offered to models (opencode 1.18 no longer does), still in tool.ids and runnable when a model asks for
# them by name (older prompts do); each asks its own permission, so the agent's rules still apply.
LEGACY = {"list", "todoread"}
log = logging.getLogger(__name__)


# ---- dynamic tools (MCP servers' tools) ------------------------------------------------------------------
# Other apps register a provider `(context, config) -> list[Tool]` (providers_app registers the MCP tools in
# its AppConfig.ready). Their tools join the model's list after the built-in ones, never replacing one.
DYNAMIC: list[Callable] = []


def register_dynamic(provider: Callable) -> None:
    if provider not in DYNAMIC:
        DYNAMIC.append(provider)


def _websearch(context, config: dict | None = None) -> list[Tool]:
    from sessions_app.runtime.tools import websearch

    return websearch.configured_tools(context, config)


# websearch exists only where a search backend is configured, so it is a dynamic tool too.
register_dynamic(_websearch)


def dynamic_tools(context, config: dict | None = None) -> list[Tool]:
    if context is None:
        return []
    out: list[Tool] = []
    for provider in DYNAMIC:
        try:
            out.extend(t for t in provider(context, config) if t.id not in REGISTRY)
        except Exception:  # a broken tool source must not stop a turn
            log.exception("dynamic tools of %r", provider)
    return out


def tool_ids(context=None) -> list[str]:
    return list(REGISTRY) + [t.id for t in dynamic_tools(context)]


def uses_patch(model_id: str | None) -> bool:
    """GPT-family models get apply_patch instead of edit/write (as opencode decides)."""
    model_id = (model_id or "").lower()
    return "gpt-" in model_id and "oss" not in model_id and "gpt-4" not in model_id


def tools_for(*, agent: dict | None = None, config: dict | None = None, model: str | dict | None = None,
              context=None, session_rules: list[dict] | None = None) -> list[Tool]:
    """The tools a model gets: the registry minus legacy ones, edit/write or apply_patch by model family,
    and minus tools the agent's (+ session's) rules deny outright. `model` is a model id or
    {providerID, modelID}; `context` fills in per-project descriptions (skills)."""
    from sessions_app.runtime.agents import agent_list
    from sessions_app.runtime.permission_rules import disabled_tools

    model_id = model.get("modelID") if isinstance(model, dict) else model
    patch = uses_patch(model_id)
    out: list[Tool] = []
    for tool_id, tool in REGISTRY.items():
        if tool_id in LEGACY:
            continue
        if patch and tool_id in ("edit", "write") or not patch and tool_id == "apply_patch":
            continue
        if tool_id == "skill":
            tool = SkillTool(context)
        elif tool_id == "task":
            tool = TaskTool(agent_list(config or {}))
        out.append(tool)
    out.extend(dynamic_tools(context, config))
    if agent is not None:
        rules = list(agent.get("permission") or []) + list(session_rules or [])
        denied = disabled_tools([t.id for t in out], rules)
        out = [t for t in out if t.id not in denied or t.id == "invalid"]
    return out


def legacy_tool(tool_id: str) -> Tool | None:
    """A legacy tool the model called by name though it was not offered (see LEGACY)."""
    return REGISTRY.get(tool_id) if tool_id in LEGACY else None


def get_tool(tool_id: str, *, context=None, config: dict | None = None) -> Tool | None:
    """A tool by id for execution (including legacy ones); None for an unknown id (the runner uses `invalid`)."""
    if tool_id == "skill":
        return SkillTool(context)
    if tool_id == "task":
        from sessions_app.runtime.agents import agent_list

        return TaskTool(agent_list(config or {}))
    return REGISTRY.get(tool_id)
