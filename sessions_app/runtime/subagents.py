"""Subagents: the task tool's `run_child` (a child session answered inline by a sub-runner sharing the
parent's abort) and `subtask` input parts (run through the task tool before the model is called)."""
from __future__ import annotations

import asyncio
import uuid

from sessions_app.models import Message, Part, Session
from sessions_app.runtime import leases
from sessions_app.runtime.processor import now_ms
from sessions_app.services import messages as message_service


def db(fn):
    from asgiref.sync import sync_to_async

    return sync_to_async(fn, thread_sensitive=True)


class SubagentsMixin:
    async def _run_subtasks(self, session: Session, user: Message, turn) -> bool:
        """`subtask` input parts run through the task tool in an assistant message of their own, before the
        model is called (reference §5.2 loop step 5). True when aborted."""
        from providers_app.stream import ToolCallEnd
        from sessions_app.runtime.tools import get_tool

        subtasks = await db(_subtasks_of)(user.id)
        for sub in subtasks:
            await self.set_status(leases.BUSY, session.id)
            info = self._assistant_info(user, turn.agent["name"], user.info.get("model") or {}, session.id)
            await db(message_service.message_save)(session=session, info=info)
            task_tool = turn.tools.get("task") or get_tool("task", context=turn.context, config=turn.config)
            processor = self._step(session, turn, info, [], {"task": task_tool})
            args = {"prompt": sub["prompt"], "description": sub["description"], "subagent_type": sub["agent"]}
            if sub.get("command"):
                args["command"] = sub["command"]

            async def work(processor=processor, args=args) -> str:
                await processor._tool_call(ToolCallEnd(id=f"call_{uuid.uuid4().hex[:24]}", name="task", input=args))
                await asyncio.gather(*processor.tool_tasks, return_exceptions=True)
                return "stop" if processor.blocked else "continue"

            outcome = await self._run_step(processor, work())
            if outcome != "aborted":
                info["finish"] = "tool-calls"
            info["time"]["completed"] = now_ms()
            await db(message_service.message_save)(session=session, info=dict(info))
            notify()
            if outcome == "aborted":
                return True
        return False

    def _child_runner(self, parent: Session, turn):
        from sessions_app.runtime.turn import child_session_and_prompt

        async def run_child(*, agent: str, prompt: str, description: str, task_id: str | None = None,
                            **_) -> tuple[str, str]:
            child, user = await db(child_session_and_prompt)(
                parent=parent, context=turn.context, config=turn.config, agent=agent, prompt=prompt,
                description=description, task_id=task_id, parent_model=turn.model)
            sub = type(self)(child.id, abort_event=self.abort_event)
            sub.session = child
            if not await db(leases.acquire)(child.id, worker_id()):
                from sessions_app.runtime.tools import ToolError

                raise ToolError(f"Session {child.id} is busy")
            registry()[child.id] = sub
            self.children.add(child.id)
            try:
                await sub.answer(user, session=child)
            finally:
                self.children.discard(child.id)
                await sub._go_idle(child.id)
                sub._deregister()
            return child.id, await db(last_text)(child.id)

        return run_child



def _subtasks_of(message_id: str) -> list[dict]:
    return [p.data for p in Part.objects.filter(message_id=message_id, type="subtask").order_by("id")]


def last_text(session_id: str) -> str:
    message = Message.objects.filter(session_id=session_id, role="assistant").order_by("-id").first()
    if message is None:
        return ""
    texts = [p.data.get("text") or "" for p in Part.objects.filter(message=message, type="text").order_by("id")
             if not p.data.get("synthetic")]
    return "\n".join(t for t in texts if t)




def notify() -> None:
    from sessions_app.runtime.runner import _notify

    _notify()


def registry() -> dict:
    from sessions_app.runtime.runner import _runners

    return _runners


def worker_id() -> str:
    from sessions_app.runtime.runner import WORKER_ID

    return WORKER_ID
