"""Subagents: the task tool's `run_child` (a child session answered inline, in a scope sharing the parent's
abort) and `subtask` input parts (run through the task tool before the model is called, reference §5.2
loop step 5). Plain functions over the RunScope the runner hands them (runtime/scope.py)."""
from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol

from agentserver.workers.loop import db
from sessions_app.models import Message
from sessions_app.runtime.compaction import user_message
from sessions_app.runtime.scope import RunScope
from sessions_app.runtime.tool_registry import get_tool
from sessions_app.runtime.tools.base import ToolError
from sessions_app.store.leases import BUSY
from sessions_app.store.messages import parts_of_type, subtasks_of
from sessions_app.store.rows import latest_assistant

SUBTASK_CONTINUE_TEXT = "Summarize the task tool output above and continue with your task."


class Turns(Protocol):
    """runtime/turn.py's Turns, handed in so a child session is answered by the same loop."""

    def answer(self, scope: RunScope, user: Message, *, resumed: bool = False) -> Awaitable[bool]: ...


async def run_subtasks(scope: RunScope, user: Message, turn, turns: Turns) -> bool:
    """Each `subtask` part runs through the task tool in an assistant message of its own. True when aborted."""
    for sub in await db(subtasks_of)(user.id):
        await scope.set_status(BUSY)
        info = await scope.open_assistant(user, turn.agent["name"], user.info.get("model") or {})
        task_tool = turn.tools.get("task") or get_tool("task", context=turn.context, config=turn.config)
        processor = scope.new_step(turn, info, messages=[], tools={"task": task_tool},
                                   run_child=child_runner(scope, turn, turns))
        args = {"prompt": sub["prompt"], "description": sub["description"], "subagent_type": sub["agent"]}
        if sub.get("command"):
            args["command"] = sub["command"]
        outcome = await scope.run_calls(processor, [(f"call_{uuid.uuid4().hex[:24]}", "task", args)])
        if outcome == "aborted":
            return True
    return False


async def continue_after_subtasks(scope: RunScope, user: Message) -> Message:
    """After a command's subtask ran, the model answers a synthetic user message asking it to carry on."""
    subtasks = await db(subtasks_of)(user.id)
    if not any(isinstance(s, dict) and s.get("command") for s in subtasks):
        return user
    return await db(user_message)(session=scope.session, like=user, continues=user.id, parts=[
        {"type": "text", "text": SUBTASK_CONTINUE_TEXT, "synthetic": True}])


def child_runner(scope: RunScope, turn, turns: Turns) -> Callable:
    """The task tool's `ctx.run_child`: answer `prompt` in a child session; (child id, its final text)."""
    from sessions_app.runtime.turn_setup import child_session_and_prompt

    parent = scope.session

    async def run_child(*, agent: str, prompt: str, description: str, task_id: str | None = None,
                        **_) -> tuple[str, str]:
        child, user = await db(child_session_and_prompt)(
            parent=parent, context=turn.context, config=turn.config, agent=agent, prompt=prompt,
            description=description, task_id=task_id, parent_model=turn.model)
        sub = scope.child(child)
        if not await scope.lease.acquire(child.id):
            raise ToolError(f"Session {child.id} is busy")
        with scope.supervisor.running_child(child.id, scope.abort_event):
            try:
                await turns.answer(sub, user)
            finally:
                await sub.go_idle()
        return child.id, await db(last_text)(child.id)

    return run_child


def last_text(session_id: str) -> str:
    message = latest_assistant(session_id)
    if message is None:
        return ""
    texts = [p.data.get("text") or "" for p in parts_of_type(message.id, "text") if not p.data.get("synthetic")]
    return "\n".join(t for t in texts if t)
