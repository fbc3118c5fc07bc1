"""What every tool is made of: the context a call runs in, its result, its errors, and the one
path check all file access goes through (boundary → `external_directory` permission; roots → hard error)."""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from agentserver import paths
from agentserver.context import RuntimeContext
from agentserver.errors import ApiError
from agentserver.workers.loop import free_db
from sessions_app.runtime.tool_errors import (  # noqa: F401
    PermissionRejected,
    QuestionRejected,
    ToolError,
)

SCHEMA = "https://json-schema.org/draft/2020-12/schema"


async def _no_update(**_: Any) -> None:
    return None


@dataclass
class ToolContext:
    session_id: str
    message_id: str
    call_id: str
    agent: str
    context: RuntimeContext
    abort: asyncio.Event
    ask: Callable[..., Awaitable[None]]
    update: Callable[..., Awaitable[None]] = _no_update
    run_child: Callable[..., Awaitable[tuple[str, str]]] | None = None
    # The effective config; loaded on first use when the runner did not pass it.
    config: dict | None = None
    extra: dict = field(default_factory=dict)

    async def get_config(self) -> dict:
        if self.config is None:
            from projects_app.config import effective_config

            self.config = await free_db(effective_config)(self.context)
        return self.config


@dataclass
class ToolResult:
    output: str
    title: str = ""
    metadata: dict = field(default_factory=dict)
    attachments: list = field(default_factory=list)


class Tool:
    id: str = ""
    description: str = ""
    parameters: dict = {}

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:  # pragma: no cover - interface
        raise NotImplementedError

    def spec(self) -> dict:
        """The `{id, description, parameters}` record of GET /experimental/tool and of the model request."""
        return {"id": self.id, "description": self.description, "parameters": self.parameters}


def schema(properties: dict, required: list[str]) -> dict:
    return {"$schema": SCHEMA, "type": "object", "properties": properties, "required": required}


def require_str(args: dict, key: str, *, allow_empty: bool = False) -> str:
    value = args.get(key)
    if not isinstance(value, str) or (not allow_empty and value == ""):
        raise ToolError(f"Invalid arguments: '{key}' must be a {'string' if allow_empty else 'non-empty string'}")
    return value


def optional_int(args: dict, key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        raise ToolError(f"Invalid arguments: '{key}' must be a number")
    try:
        return int(float(value))
    except (TypeError, ValueError):
        raise ToolError(f"Invalid arguments: '{key}' must be a number")


def relative_title(ctx: ToolContext, path: str) -> str:
    rel = os.path.relpath(path, ctx.context.worktree if ctx.context.vcs else ctx.context.directory)
    return path if rel.startswith("..") else rel


async def user_roots(ctx: ToolContext) -> list[str]:
    """The directories the session's tools may touch: the user's roots, and the worktree of a server-made
    workspace the session runs in (under AGENTSERVER_SHARED_DIR, outside the roots), as its HTTP routes do."""
    from auth_app.tokens import roots_of
    from projects_app.contexts import server_workspace_directories

    def allowed(user, workspace_id):
        return roots_of(user) + server_workspace_directories(user, workspace_id)

    return await free_db(allowed)(ctx.context.user, ctx.context.workspace_id)


async def confine(ctx: ToolContext, path: str, *, kind: str = "file") -> str:
    """The real path of `path` (relative ones against the session's directory), fit for the tool to touch.

    Outside the user's allowed roots: a hard ToolError, no question asked. Inside the roots but outside
    the session's boundary (worktree): asks `external_directory` for the parent directory."""
    try:
        real = paths.resolve(path, relative_to=ctx.context.directory)
    except ApiError as error:
        raise ToolError(error.message) from None
    roots = await user_roots(ctx)
    if not paths.within_any(real, roots):
        raise ToolError(f"Access denied: {real} is outside the directories you are allowed to use")
    if not paths.is_within(real, os.path.realpath(ctx.context.boundary)):
        parent = real if kind == "directory" else os.path.dirname(real)
        glob = os.path.join(parent, "*")
        await ctx.ask("external_directory", [glob], metadata={"filepath": real, "parentDir": parent},
                      always=[glob])
    return real


def truncate(text: str, limit: int = 50_000) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n\n... (output truncated: {len(text) - limit} more characters)", True


async def publish(ctx: ToolContext, type: str, properties: dict) -> None:
    """Events from a tool: through a thread, since the bus may write its durable log."""
    from agentserver.events import publisher as events

    await free_db(events.publish_context)(type, properties, ctx.context)
