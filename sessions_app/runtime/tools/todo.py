"""todowrite / todoread: the session's todo list (replaced whole; `todo.updated` is published by the service)."""
from __future__ import annotations

import json

from agentserver.workers.loop import free_db
from sessions_app.runtime.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    schema,
)

STATUSES = ("pending", "in_progress", "completed", "cancelled")
PRIORITIES = ("high", "medium", "low")

WRITE_DESCRIPTION = """Use this tool to create and manage a structured task list for your current coding session. This helps you track progress, organize complex tasks, and demonstrate thoroughness to the user.

When to use it:
1. Complex multistep tasks - when a task requires 3 or more distinct steps or actions
2. The user explicitly requests a todo list, or provides multiple tasks (numbered or comma-separated)
3. After receiving new instructions - capture the user's requirements as todos
4. After completing a task - mark it completed and add any new follow-up tasks

When NOT to use it: a single, straightforward task, or a purely conversational or informational request.

Task states: pending (not yet started), in_progress (currently working on; only one at a time), completed (finished successfully), cancelled (no longer needed). Mark tasks completed IMMEDIATELY after finishing them; do not batch up completions."""

READ_DESCRIPTION = "Use this tool to read your todo list"


def _todos(session_id: str) -> list[dict]:
    from sessions_app.store.todos import todos_of
    from sessions_app.wire import todo_wire

    return [todo_wire(t) for t in todos_of(session_id)]


def _replace(session_id: str, todos: list[dict]) -> list[dict]:
    from sessions_app.store.sessions import session_by_id
    from sessions_app.store.todos import todos_replace
    from sessions_app.wire import todo_wire

    session = session_by_id(session_id)
    return [todo_wire(t) for t in todos_replace(session=session, todos=todos)]


def _title(todos: list[dict]) -> str:
    return f"{sum(1 for t in todos if t.get('status') != 'completed')} todos"


class TodoWriteTool(Tool):
    id = "todowrite"
    description = WRITE_DESCRIPTION
    parameters = schema({
        "todos": {"type": "array", "description": "The updated todo list", "items": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "Brief description of the task"},
                "status": {"type": "string",
                           "description": "Current status of the task: pending, in_progress, completed, cancelled"},
                "priority": {"type": "string", "description": "Priority level of the task: high, medium, low"},
            },
            "required": ["content", "status", "priority"],
        }},
    }, ["todos"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        todos = args.get("todos")
        if not isinstance(todos, list) or not all(isinstance(t, dict) for t in todos):
            raise ToolError("Invalid arguments: 'todos' must be an array of objects")
        clean = []
        for item in todos:
            if not isinstance(item.get("content"), str):
                raise ToolError("Invalid arguments: every todo needs a 'content' string")
            clean.append({"content": item["content"],
                          "status": item.get("status") if item.get("status") in STATUSES else "pending",
                          "priority": item.get("priority") if item.get("priority") in PRIORITIES else "medium",
                          **({"id": item["id"]} if isinstance(item.get("id"), str) else {})})
        await ctx.ask("todowrite", ["*"], metadata={}, always=["*"])
        saved = await free_db(_replace)(ctx.session_id, clean)
        return ToolResult(output=json.dumps(saved, indent=2), title=_title(saved), metadata={"todos": saved})


class TodoReadTool(Tool):
    id = "todoread"
    description = READ_DESCRIPTION
    parameters = schema({}, [])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        await ctx.ask("todoread", ["*"], metadata={}, always=["*"])
        todos = await free_db(_todos)(ctx.session_id)
        return ToolResult(output=json.dumps(todos, indent=2), title=_title(todos), metadata={"todos": todos})
