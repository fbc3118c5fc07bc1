"""One model call → one assistant message's parts (reference §5.2 step 10, §3.5).

Parts are written when they start and finish (message.part.updated); streaming text is published delta by
delta at once (message.part.delta) and checkpointed to the database without an event every
CHECKPOINT_SECONDS, so a crash loses at most that much of what clients already saw."""
from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from asgiref.sync import sync_to_async

from agentserver import events, ids
from agentserver.errors import ApiError
from providers_app.errors import ProviderCallError, ProviderError
from providers_app.stream import Finish, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from sessions_app.models import Part, Session
from sessions_app.runtime import snapshots
from sessions_app.runtime.leases import close_part
from sessions_app.runtime.tools import PermissionRejected, ToolContext, ToolError
from sessions_app.services import messages as message_service

log = logging.getLogger(__name__)
CHECKPOINT_SECONDS = 0.25
TOOL_UPDATE_SECONDS = 0.1
RETRY_BASE_MS = int(os.environ.get("AGENTSERVER_RETRY_BASE_MS", "2000"))
RETRY_MAX_MS = 30_000


def now_ms() -> int:
    return int(time.time() * 1000)


def db(fn):
    return sync_to_async(fn, thread_sensitive=True)


def retry_delay_ms(attempt: int, error: ProviderCallError | None = None) -> int:
    headers = {k.lower(): v for k, v in ((error.response_headers if error else None) or {}).items()}
    for key, scale in (("retry-after-ms", 1), ("retry-after", 1000)):
        try:
            if key in headers:
                return min(int(float(headers[key]) * scale), RETRY_MAX_MS)
        except ValueError:
            pass
    return min(RETRY_BASE_MS * 2 ** (attempt - 1), RETRY_MAX_MS)


def _silent_write(part_id: str, data: dict) -> None:
    Part.objects.filter(id=part_id).update(data=data)


def unknown_error(message: str) -> dict:
    return {"name": "UnknownError", "data": {"message": message}}


@dataclass
class Step:
    """Everything one model call needs; built by the runner per step."""
    session: Session
    context: Any
    config: dict
    agent: dict
    info: dict                       # the assistant message info (mutated here, saved by the caller)
    system: list[str]
    messages: list[dict]
    tools: dict                      # tool id → Tool offered to the model
    rules: list[dict]
    abort: asyncio.Event
    run_child: Callable | None
    set_status: Callable             # async (status dict) → None
    temperature: float | None = None
    parts: dict = field(default_factory=dict)   # part id → data, everything written so far


class StepProcessor:
    def __init__(self, step: Step):
        self.step = step
        self.session = step.session
        self.info = step.info
        self.text_part: dict | None = None
        self.reasoning_part: dict | None = None
        self.tool_parts: dict[str, dict] = {}      # call id → part
        self.tool_tasks: list[asyncio.Task] = []
        self.finish: Finish | None = None
        self.blocked = False
        self.started = False
        self._last_checkpoint = 0.0
        self._deltas = DeltaBuffer(self._emit_delta)

    # ---- writes -----------------------------------------------------------------------------------
    def _new_part(self, kind: str, **fields) -> dict:
        return {"id": ids.ascending("prt"), "sessionID": self.session.id, "messageID": self.info["id"],
                "type": kind, **fields}

    async def save(self, part: dict) -> None:
        self._deltas.flush()  # a part's deltas go out before its next message.part.updated
        self.step.parts[part["id"]] = part
        await db(message_service.part_save)(session=self.session, part=part)

    async def publish_delta(self, part: dict, delta: str) -> None:
        self._deltas.add(part, delta)

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
            await db(_silent_write)(part["id"], dict(part))

    # ---- stream handling --------------------------------------------------------------------------
    async def run(self) -> str:
        """"continue" (the model asked for tools), or "stop"."""
        from providers_app.llm import stream_chat

        step, attempt = self.step, 0
        while True:
            try:
                stream = stream_chat(
                    context=step.context, provider_id=self.info["providerID"], model_id=self.info["modelID"],
                    system=step.system, messages=step.messages,
                    tools=[{"name": t.id, "description": t.description, "parameters": t.parameters}
                           for t in step.tools.values()],
                    temperature=step.temperature, headers={"x-session-id": self.session.id})
                async for event in stream:
                    await self._on_event(event)
                if self.finish is None:
                    raise ProviderCallError("The model stream ended without finishing", is_retryable=True)
                break
            except ProviderCallError as error:
                if not error.is_retryable or self.tool_tasks:
                    return await self._fail(error.named())
                attempt += 1
                delay = retry_delay_ms(attempt, error)
                await step.set_status({"type": "retry", "attempt": attempt, "message": error.message,
                                       "next": now_ms() + delay})
                await asyncio.sleep(delay / 1000)
                await step.set_status({"type": "busy"})
            except ProviderError as error:
                return await self._fail(error.named())
            except ApiError as error:
                return await self._fail(unknown_error(error.message))
        await self._end_streams()
        if self.tool_tasks:
            await asyncio.gather(*self.tool_tasks, return_exceptions=True)
        return await self._finish_step()

    async def _on_event(self, event) -> None:
        if not self.started:
            self.started = True
            await self.save(self._new_part("step-start", **await snapshots.step_start(self)))
        if isinstance(event, TextDelta):
            if not event.text:
                return
            if self.text_part is None:
                self.text_part = self._new_part("text", text="", time={"start": now_ms()})
                await self.save(dict(self.text_part))
            self.text_part["text"] += event.text
            await self.publish_delta(self.text_part, event.text)
            await self._checkpoint(self.text_part)
        elif isinstance(event, ReasoningDelta):
            if self.reasoning_part is None:
                self.reasoning_part = self._new_part("reasoning", text="", time={"start": now_ms()})
                await self.save(dict(self.reasoning_part))
            if event.signature:
                self.reasoning_part["metadata"] = {"signature": event.signature}
            if event.text:
                self.reasoning_part["text"] += event.text
                await self.publish_delta(self.reasoning_part, event.text)
                await self._checkpoint(self.reasoning_part)
        elif isinstance(event, ToolCallStart):
            await self._tool_pending(event.id, event.name)
        elif isinstance(event, ToolCallEnd):
            await self._tool_call(event)
        elif isinstance(event, Finish):
            self.finish = event
        elif isinstance(event, ToolCallDelta):
            return

    async def _end_streams(self) -> None:
        """Reasoning and text parts get their final write (with time.end)."""
        for attr in ("reasoning_part", "text_part"):
            part = getattr(self, attr)
            if part is not None:
                part["time"] = {**part["time"], "end": now_ms()}
                await self.save(dict(part))
                setattr(self, attr, None)

    async def _fail(self, error: dict) -> str:
        await self._end_streams()
        self.info["error"] = error
        session = self.session
        message_service.publish_for(session, "session.error", {"sessionID": session.id, "error": error})
        return "stop"

    async def _finish_step(self) -> str:
        finish = self.finish
        usage, cost = finish.usage, float(finish.cost or 0)
        tokens = usage.wire()
        await self.save(self._new_part("step-finish", reason=finish.reason, cost=cost, tokens=tokens,
                                       **await snapshots.step_finish(self)))
        self.info["finish"] = finish.reason
        self.info["tokens"] = tokens
        self.info["cost"] = float(self.info.get("cost") or 0) + cost
        await db(message_service.message_save)(session=self.session, info=dict(self.info))
        await db(add_session_usage)(self.session.id, cost, tokens)
        await snapshots.after_step(self)  # patch part, session summary, session.diff (SNAPSHOTS)
        if self.blocked:
            return "stop"
        return "continue" if finish.reason == "tool-calls" else "stop"

    # ---- tools ------------------------------------------------------------------------------------
    async def _tool_pending(self, call_id: str, name: str) -> dict:
        await self._end_streams()
        part = self._new_part("tool", callID=call_id, tool=name, state={"status": "pending", "input": {}, "raw": ""})
        self.tool_parts[call_id] = part
        await self.save(dict(part))
        return part

    async def _tool_call(self, event: ToolCallEnd) -> None:
        part = self.tool_parts.get(event.id) or await self._tool_pending(event.id, event.name)
        tool, args = self.step.tools.get(event.name), event.input if isinstance(event.input, dict) else {}
        if tool is None:
            from sessions_app.runtime.tools import get_tool

            available = ", ".join(sorted(self.step.tools))
            args = {"tool": event.name,
                    "error": f"Model tried to call unavailable tool '{event.name}'. Available tools: {available}."}
            tool = get_tool("invalid")
        part["tool"] = tool.id
        part["state"] = {"status": "running", "input": args, "time": {"start": now_ms()}}
        await self.save(dict(part))
        doom_loop = self._doom_loop(tool.id, args)
        self.tool_tasks.append(asyncio.create_task(self._execute(part, tool, args, doom_loop=doom_loop)))

    # ---- doom loop (RUNNER2) ------------------------------------------------------------------------
    DOOM_LOOP_THRESHOLD = 3

    def _doom_loop(self, tool_id: str, args: dict) -> bool:
        """The reference's check (§5.2 step 10): the last three parts of this assistant message, the call
        just made included, are calls of the same tool with the same input (none still pending)."""
        last = list(self.step.parts.values())[-self.DOOM_LOOP_THRESHOLD:]
        return len(last) == self.DOOM_LOOP_THRESHOLD and all(
            p.get("type") == "tool" and p.get("tool") == tool_id and p["state"].get("status") != "pending"
            and p["state"].get("input") == args for p in last)

    def _tool_context(self, part: dict) -> ToolContext:
        from sessions_app.services.permissions import asker

        step, call_id = self.step, part["callID"]
        pending: dict = {"task": None, "last": 0.0}

        async def flush() -> None:
            pending["last"] = time.monotonic()
            if part["state"]["status"] == "running":
                await self.save(_copy(part))

        async def delayed_flush() -> None:
            await asyncio.sleep(TOOL_UPDATE_SECONDS)
            pending["task"] = None
            await flush()

        async def update(*, metadata: dict | None = None, title: str | None = None, **_) -> None:
            state = part["state"]
            if state["status"] != "running":
                return
            if metadata is not None:
                state["metadata"] = metadata
            if title is not None:
                state["title"] = title
            if time.monotonic() - pending["last"] >= TOOL_UPDATE_SECONDS:
                await flush()
            elif pending["task"] is None:
                pending["task"] = asyncio.create_task(delayed_flush())

        part["_flush"] = pending
        return ToolContext(
            session_id=self.session.id, message_id=self.info["id"], call_id=call_id, agent=self.info["agent"],
            context=step.context, abort=step.abort,
            ask=asker(session=self.session, rules=step.rules, message_id=self.info["id"], call_id=call_id,
                      abort=step.abort),
            update=update, run_child=step.run_child, config=step.config)

    async def _execute(self, part: dict, tool, args: dict, *, doom_loop: bool = False) -> None:
        ctx = self._tool_context(part)
        state = part["state"]
        try:
            if doom_loop:  # the agent's rules decide (default ask); a rejection halts like any other
                await ctx.ask("doom_loop", [tool.id], metadata={"tool": tool.id, "input": args}, always=[tool.id])
            result = await tool.run(args, ctx)
            done = {"status": "completed", "input": args, "output": result.output, "title": result.title or "",
                    "metadata": result.metadata or {}, "time": {"start": state["time"]["start"], "end": now_ms()}}
            if result.attachments:
                done["attachments"] = [self._attachment(a) for a in result.attachments]
        except PermissionRejected as error:
            if error.halts:
                self.blocked = True
            done = self._errored(part, args, str(error))
        except ToolError as error:
            done = self._errored(part, args, str(error))
        except asyncio.CancelledError:
            part["state"] = self._errored(part, args, "Tool execution aborted")
            await self._settle(part)
            raise
        except Exception as error:  # a tool bug must not kill the loop: the model sees the error
            log.exception("tool %s failed", tool.id)
            done = self._errored(part, args, f"{type(error).__name__}: {error}")
        part["state"] = done
        await self._settle(part)

    async def _settle(self, part: dict) -> None:
        pending = part.pop("_flush", None)
        if pending and pending.get("task"):
            pending["task"].cancel()
        await self.save(_copy(part))

    def _errored(self, part: dict, args: dict, message: str) -> dict:
        state = part["state"]
        out = {"status": "error", "input": args, "error": message,
               "time": {"start": (state.get("time") or {}).get("start", now_ms()), "end": now_ms()}}
        if state.get("metadata"):
            out["metadata"] = state["metadata"]
        return out

    def _attachment(self, item: dict) -> dict:
        return {**item, "id": item.get("id") or ids.ascending("prt"), "sessionID": self.session.id,
                "messageID": self.info["id"], "type": "file"}

    # ---- abort ------------------------------------------------------------------------------------
    async def finalize_aborted(self) -> None:
        """After the stream task was cancelled: let tools notice the abort (they kill their process
        groups), then close whatever is still open. No step-finish part, as the reference."""
        if self.tool_tasks:
            _, waiting = await asyncio.wait(self.tool_tasks, timeout=2.0)
            for task in waiting:
                task.cancel()
            if waiting:
                await asyncio.wait(waiting, timeout=2.0)
        await self._end_streams()
        now = now_ms()
        for part in list(self.step.parts.values()):
            closed = close_part(part, now)
            if closed is not None:
                await self.save(_copy(closed))


# ---- delta coalescing (PERF) ------------------------------------------------------------------------
DELTA_FLUSH_SECONDS = 0.01


class DeltaBuffer:
    """Coalesces the text deltas of one part into one message.part.delta (the concatenated text) when they
    arrive faster than one per DELTA_FLUSH_SECONDS. A delta after a quiet spell goes out as soon as the
    processor yields to the loop (no added latency for a model streaming slower than that); a burst goes out
    at most once per window, so 5,000 back-to-back deltas cost a few hundred events to every subscriber, not
    5,000. The processor flushes before each of its part writes: a part's deltas always precede its next
    message.part.updated, and they still concatenate to the final text exactly."""

    def __init__(self, emit: Callable[[dict, str], None]):
        self._emit = emit
        self._part: dict | None = None
        self._chunks: list[str] = []
        self._handle: asyncio.TimerHandle | None = None
        self._last_flush = float("-inf")  # loop time

    def add(self, part: dict, text: str) -> None:
        if self._part is not None and self._part["id"] != part["id"]:
            self.flush()
        self._part = part
        self._chunks.append(text)
        if self._handle is None:
            loop = asyncio.get_running_loop()
            self._handle = loop.call_at(max(loop.time(), self._last_flush + DELTA_FLUSH_SECONDS), self.flush)

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._chunks:
            part, text = self._part, "".join(self._chunks)
            self._chunks = []
            self._last_flush = asyncio.get_running_loop().time()
            self._emit(part, text)


def _copy(part: dict) -> dict:
    return {k: v for k, v in part.items() if not k.startswith("_")}


def add_session_usage(session_id: str, cost: float, tokens: dict) -> None:
    """Running totals on the session (written silently; session.updated follows at the end of the turn)."""
    from django.db import transaction

    with transaction.atomic():
        row = Session.objects.select_for_update().filter(id=session_id).values_list("tokens", "cost").first()
        if row is None:
            return
        totals, total_cost = dict(row[0] or {}), float(row[1] or 0)
        for key in ("input", "output", "reasoning"):
            totals[key] = int(totals.get(key) or 0) + int(tokens.get(key) or 0)
        cache = dict(totals.get("cache") or {})
        for key in ("read", "write"):
            cache[key] = int(cache.get(key) or 0) + int((tokens.get("cache") or {}).get(key) or 0)
        totals["cache"] = cache
        Session.objects.filter(id=session_id).update(tokens=totals, cost=total_cost + cost)
