"""Running the tool calls of one step: each call's part goes pending → running → completed | error (states
built by runtime/parts.py), its progress updates are throttled to one write per TOOL_UPDATE_SECONDS, the
same call repeated three times asks `doom_loop` first, and a permission rejection halts the loop."""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Awaitable, Callable

from sessions_app.runtime import parts
from sessions_app.runtime.tool_audit import tool_call_entry
from sessions_app.runtime.tool_registry import get_tool, legacy_tool
from sessions_app.runtime.tools.base import PermissionRejected, ToolContext, ToolError

log = logging.getLogger(__name__)
TOOL_UPDATE_SECONDS = 0.1
DOOM_LOOP_THRESHOLD = 3


class ToolCalls:
    """The tool calls of one step, whose parts belong to its AssistantMessage (runtime/assistant_message.py);
    `save` writes one (the step's writer: it sends the step's pending deltas first), and a settled call's
    part with its audit record (`audit=`, tool_audit.py) in one transaction."""

    def __init__(self, *, step, message, save: Callable[..., Awaitable[None]]):
        self.step = step
        self.message = message
        self.save = save
        self.parts: dict[str, dict] = {}      # call id → part
        self.tasks: list[asyncio.Task] = []
        self.blocked = False                  # a rejection that halts the loop

    @property
    def started(self) -> bool:
        return bool(self.tasks)

    async def pending(self, call_id: str, name: str) -> dict:
        part = parts.tool_pending(self.step.session.id, self.step.info["id"], call_id, name)
        self.parts[call_id] = part
        await self.save(dict(part))
        return part

    async def start(self, call_id: str, name: str, args) -> None:
        """The model finished a call: run it (in a task of its own; the step waits for all of them)."""
        part = self.parts.get(call_id) or await self.pending(call_id, name)
        tools = self.step.tools
        tool = tools.get(name) or legacy_tool(name)
        args = args if isinstance(args, dict) else {}
        if tool is None:
            available = ", ".join(sorted(tools))
            args = {"tool": name,
                    "error": f"Model tried to call unavailable tool '{name}'. Available tools: {available}."}
            tool = get_tool("invalid")
        part["tool"] = tool.id
        part["state"] = parts.tool_running(args)
        await self.save(dict(part))
        doom_loop = self._doom_loop(tool.id, args)
        self.tasks.append(asyncio.create_task(self._execute(part, tool, args, doom_loop=doom_loop)))

    async def wait(self) -> None:
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)

    async def forget_pending(self) -> None:
        """A failed attempt's calls that never started running are dropped before the next attempt."""
        for call_id, part in list(self.parts.items()):
            if part["state"].get("status") == "pending":
                del self.parts[call_id]
                await self.message.remove_part(part)

    async def cancel(self) -> None:
        """After an abort: let tools notice it (they kill their process groups), then cancel the rest."""
        if self.tasks:
            _, waiting = await asyncio.wait(self.tasks, timeout=2.0)
            for task in waiting:
                task.cancel()
            if waiting:
                await asyncio.wait(waiting, timeout=2.0)

    def _doom_loop(self, tool_id: str, args: dict) -> bool:
        """The reference's check (§5.2 step 10): the last three parts of this assistant message, the call
        just made included, are calls of the same tool with the same input (none still pending)."""
        last = list(self.message.parts.values())[-DOOM_LOOP_THRESHOLD:]
        return len(last) == DOOM_LOOP_THRESHOLD and all(
            p.get("type") == "tool" and p.get("tool") == tool_id and p["state"].get("status") != "pending"
            and p["state"].get("input") == args for p in last)

    def _context(self, part: dict) -> ToolContext:
        from sessions_app.runtime.asking import asker

        step, call_id = self.step, part["callID"]
        pending: dict = {"task": None, "last": 0.0}

        async def flush() -> None:
            pending["last"] = time.monotonic()
            if part["state"]["status"] == "running":
                await self.save(parts.stored(part))

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
        info = step.info
        return ToolContext(
            session_id=step.session.id, message_id=info["id"], call_id=call_id, agent=info["agent"],
            context=step.context, abort=step.abort,
            ask=asker(session=step.session, rules=step.rules, message_id=info["id"], call_id=call_id,
                      abort=step.abort),
            update=update, run_child=step.run_child, config=step.config)

    async def _execute(self, part: dict, tool, args: dict, *, doom_loop: bool = False) -> None:
        ctx = self._context(part)
        state = part["state"]
        try:
            if doom_loop:  # the agent's rules decide (default ask); a rejection halts like any other
                await ctx.ask("doom_loop", [tool.id], metadata={"tool": tool.id, "input": args}, always=[tool.id])
            result = await tool.run(args, ctx)
            done = parts.tool_completed(state, args, result, session_id=ctx.session_id, message_id=ctx.message_id)
        except PermissionRejected as error:
            if error.halts:
                self.blocked = True
            done = parts.tool_errored(part["state"], args, str(error))
        except ToolError as error:
            done = parts.tool_errored(part["state"], args, str(error))
        except asyncio.CancelledError:
            part["state"] = parts.tool_errored(part["state"], args, parts.TOOL_ABORTED)
            await self._settle(part)
            raise
        except Exception as error:  # a tool bug must not kill the loop: the model sees the error
            log.exception("tool %s failed", tool.id)
            done = parts.tool_errored(part["state"], args, f"{type(error).__name__}: {error}")
        part["state"] = done
        await self._settle(part)

    async def _settle(self, part: dict) -> None:
        pending = part.pop("_flush", None)
        if pending and pending.get("task"):
            pending["task"].cancel()
        await self.save(parts.stored(part), audit=tool_call_entry(part))
