"""One model call → one assistant message's parts (reference §5.2 step 10, §3.5).

Parts are written when they start and finish (message.part.updated); streaming text is published delta by
delta at once (message.part.delta) and checkpointed to the database without an event every
CHECKPOINT_SECONDS, so a crash loses at most that much of what clients already saw. Retries are decided by
runtime/retry.py; tool calls run in runtime/tool_execution.py; parts are built by runtime/parts.py."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentserver.clock import now_ms
from agentserver.errors import ApiError
from agentserver.events import publisher as events
from providers_app.errors import ProviderCallError, ProviderError
from providers_app.stream import (
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from sessions_app.models import Session
from sessions_app.runtime import metering, parts, retry
from sessions_app.runtime.assistant_message import AssistantMessage
from sessions_app.runtime.deltas import DeltaBuffer
from sessions_app.runtime.step_snapshots import StepSnapshots
from sessions_app.runtime.tool_execution import ToolCalls
from sessions_app.store import messages as message_service
from usage_app.calls import MeteredCall

CHECKPOINT_SECONDS = 0.25


@dataclass
class Step:
    """Everything one model call needs; made by RunScope.new_step (runtime/scope.py)."""
    session: Session
    context: Any
    config: dict
    agent: dict
    info: dict                       # the assistant message info (its AssistantMessage's; closed by the caller)
    system: list[str]
    messages: list[dict]
    tools: dict                      # tool id → Tool offered to the model
    rules: list[dict]
    abort: asyncio.Event
    run_child: Callable | None
    set_status: Callable             # async (status dict) → None
    temperature: float | None = None
    snapshots: StepSnapshots | None = None  # the turn's (runtime/turn_setup.py Turn.snapshots)


class StepProcessor:
    def __init__(self, step: Step):
        self.step = step
        self.session = step.session
        self.message = AssistantMessage(step.session, step.info)
        self.info = step.info
        self.text_part: dict | None = None
        self.reasoning_part: dict | None = None
        self.tools = ToolCalls(step=step, message=self.message, save=self.save)
        self.snapshots = step.snapshots or StepSnapshots(session=step.session, context=step.context,
                                                         config=step.config)
        self.finish: Finish | None = None
        self.call: MeteredCall | None = None  # the model call of the current attempt, metered
        self.started = False
        self._last_checkpoint = 0.0
        self._deltas = DeltaBuffer(self._emit_delta)

    @property
    def blocked(self) -> bool:
        return self.tools.blocked

    # ---- writes -----------------------------------------------------------------------------------
    def new_part(self, kind: str, **fields) -> dict:
        return self.message.new_part(kind, **fields)

    async def save(self, part: dict, *, audit: dict | None = None) -> None:
        self._deltas.flush()  # a part's deltas go out before its next message.part.updated
        await self.message.save_part(part, audit=audit)

    def _emit_delta(self, part: dict, delta: str) -> None:
        session = self.session
        events.publish_delta_now(
            "message.part.delta",
            {"sessionID": session.id, "messageID": self.info["id"], "partID": part["id"], "field": "text",
             "delta": delta},
            owner_id=session.owner_id, directory=session.directory, workspace_id=session.workspace_id,
            project_id=session.project_id)

    async def _checkpoint(self, part: dict) -> None:
        now = time.monotonic()
        if now - self._last_checkpoint >= CHECKPOINT_SECONDS:
            self._last_checkpoint = now
            await self.message.checkpoint_part(part)

    # ---- stream handling --------------------------------------------------------------------------
    async def run(self) -> str:
        """"continue" (the model asked for tools), or "stop"."""
        try:
            await retry.with_retries(self._attempt, tools_started=lambda: self.tools.started,
                                     forget_attempt=self._forget_attempt, set_status=self.step.set_status)
        except ProviderError as error:
            return await self._fail(error.named())
        except ApiError as error:
            return await self._fail(parts.unknown_error(error.message))
        await self._end_streams()
        await self.tools.wait()
        return await self._finish_step()

    async def _attempt(self) -> None:
        from providers_app.llm import stream_chat

        step = self.step
        self.finish = None
        self.call = call = metering.step_call(self.session, self.info)  # checks the budgets before the call
        stream = stream_chat(
            context=step.context, provider_id=self.info["providerID"], model_id=self.info["modelID"],
            system=step.system, messages=step.messages,
            tools=[{"name": t.id, "description": t.description, "parameters": t.parameters}
                   for t in step.tools.values()],
            temperature=step.temperature, headers={"x-session-id": self.session.id}, config=step.config,
            meter=call.meter)
        try:
            async for event in stream:
                await self._on_event(event)
            if self.finish is None:
                raise ProviderCallError("The model stream ended without finishing", is_retryable=True)
        except Exception:
            # A failed attempt is counted with what it received, whether it is retried or ends the step.
            await metering.record(call.ended("error"))
            raise

    async def _forget_attempt(self) -> None:
        """Before a retry: what the failed attempt streamed is dropped, so the message holds each text once.
        Its text and reasoning parts are reset (same ids, empty text: clients replace the part on
        message.part.updated) and the next attempt streams into them; calls that never ran are removed."""
        for attr in ("reasoning_part", "text_part"):
            part = getattr(self, attr)
            if part is not None:
                part["text"] = ""
                part.pop("metadata", None)
                part["time"] = {"start": now_ms()}
                await self.save(dict(part))
        await self.tools.forget_pending()

    async def _on_event(self, event) -> None:
        if not self.started:
            self.started = True
            await self.save(self.new_part("step-start", **await self.snapshots.start()))
        if isinstance(event, TextDelta):
            if not event.text:
                return
            if self.text_part is None:
                self.text_part = parts.streaming_text(self.session.id, self.info["id"], "text")
                await self.save(dict(self.text_part))
            self.text_part["text"] += event.text
            self._deltas.add(self.text_part, event.text)
            await self._checkpoint(self.text_part)
        elif isinstance(event, ReasoningDelta):
            if self.reasoning_part is None:
                self.reasoning_part = parts.streaming_text(self.session.id, self.info["id"], "reasoning")
                await self.save(dict(self.reasoning_part))
            if event.signature:
                self.reasoning_part["metadata"] = {"signature": event.signature}
            if event.text:
                self.reasoning_part["text"] += event.text
                self._deltas.add(self.reasoning_part, event.text)
                await self._checkpoint(self.reasoning_part)
        elif isinstance(event, ToolCallStart):
            await self._end_streams()
            await self.tools.pending(event.id, event.name)
        elif isinstance(event, ToolCallEnd):
            await self.run_call(event.id, event.name, event.input)
        elif isinstance(event, Finish):
            self.finish = event
        elif isinstance(event, ToolCallDelta):
            return

    async def run_call(self, call_id: str, name: str, args) -> None:
        """Start one tool call (from the stream, or re-run by subtasks and resume without a model call)."""
        if call_id not in self.tools.parts:
            await self._end_streams()
        await self.tools.start(call_id, name, args)

    async def _end_streams(self) -> None:
        """Reasoning and text parts get their final write (with time.end)."""
        for attr in ("reasoning_part", "text_part"):
            part = getattr(self, attr)
            if part is not None:
                await self.save(dict(parts.ended(part)))
                setattr(self, attr, None)

    async def _fail(self, error: dict) -> str:
        await self._end_streams()
        self.message.fail(error)
        session = self.session
        message_service.publish_for(session, "session.error", {"sessionID": session.id, "error": error})
        return "stop"

    async def _finish_step(self) -> str:
        finish = self.finish
        usage, cost = finish.usage, float(finish.cost or 0)
        tokens = usage.wire()
        await self.save(self.new_part("step-finish", reason=finish.reason, cost=cost, tokens=tokens,
                                      **await self.snapshots.finish()))
        call = self.call.ended("completed", cost=cost) if self.call is not None else None
        await self.message.finish_step(reason=finish.reason, cost=cost, tokens=tokens, call=call)
        await self.snapshots.after(save_patch=self._save_patch, user_message_id=self.info.get("parentID"))
        if self.blocked:
            return "stop"
        return "continue" if finish.reason == "tool-calls" else "stop"

    async def _save_patch(self, hash: str, files: list) -> None:
        await self.save(self.new_part("patch", hash=hash, files=files))

    def calls_done(self) -> None:
        """A step without a model call (subtasks, resume) ran its calls to the end."""
        self.info["finish"] = "tool-calls"

    # ---- abort ------------------------------------------------------------------------------------
    async def count_cut_call(self) -> None:
        """The model call the abort cut (if one was under way and not counted yet), with what it received."""
        if self.call is not None:
            await metering.record(self.call.ended("aborted"))

    async def finalize_aborted(self) -> None:
        """After the stream task was cancelled: let tools notice the abort, then close whatever is still
        open, and the message ends aborted. No step-finish part, as the reference."""
        await self.count_cut_call()
        await self.tools.cancel()
        await self._end_streams()
        now = now_ms()
        for part in list(self.message.parts.values()):
            closed = parts.close_part(part, now)
            if closed is not None:
                await self.save(parts.stored(closed))
        self.message.fail(parts.ABORTED)

