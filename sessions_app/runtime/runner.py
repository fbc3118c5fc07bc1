"""The agent runner: one asyncio task per busy session, on daphne's event loop, in the worker that holds the
session's lease (sessions_app.runtime.leases).

Threads and loops: DRF views run in threads. The first request captures the server loop (an async
`request_started` receiver; failing that, `async_to_sync` from the view thread runs on the same loop) and
views reach the runner with `call(...)` = `run_coroutine_threadsafe`. Each runner runs its ORM calls in
its own ThreadSensitiveContext, i.e. one dedicated thread per runner.

Queue: the stored user messages newer than the last answered one (leases.next_pending), answered in order;
each model call is a new assistant message. Abort: a local runner is aborted directly; otherwise the
request goes to channel-layer group `session.<id>`, which the runner of the holding worker listens on.
Restart safety: a runner that acquires a lease first closes assistant messages a dead runner left open
(MessageAbortedError); a janitor on every worker adopts sessions whose lease expired."""
from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import uuid

from asgiref.sync import ThreadSensitiveContext, async_to_sync, sync_to_async

from agentserver import ids
from sessions_app.models import Message, Part, Session
from sessions_app.runtime import leases
from sessions_app.runtime.history import MAX_STEPS_TEXT, provider_messages, system_prompt
from sessions_app.runtime.processor import Step, StepProcessor, now_ms
from sessions_app.runtime.subagents import SubagentsMixin
from sessions_app.runtime.resume import INTERRUPTED_KEY, ResumeMixin, waiting_calls
from sessions_app.runtime.compaction import CompactionMixin, compaction_part, continuation_of, prune_quietly
from sessions_app.services import messages as message_service

log = logging.getLogger(__name__)
WORKER_ID = uuid.uuid4().hex
RENEW_SECONDS = max(leases.LEASE_MS / 3000, 0.2)
JANITOR_SECONDS = max(leases.LEASE_MS / 2000, 1.0)

_loop: asyncio.AbstractEventLoop | None = None
_janitor: asyncio.Task | None = None
_runners: dict[str, "Runner"] = {}
_answered = threading.Condition()


def db(fn):
    return sync_to_async(fn, thread_sensitive=True)


def free_db(fn):
    return sync_to_async(fn, thread_sensitive=False)


def group_name(session_id: str) -> str:
    return f"session.{session_id}"


# ---- loop access ----------------------------------------------------------------------------------

async def start() -> None:
    """Capture the server loop and start the janitor (idempotent; runs on the loop)."""
    global _loop, _janitor
    _loop = asyncio.get_running_loop()
    if _janitor is None or _janitor.done():
        _janitor = _loop.create_task(_janitor_loop(), context=contextvars.Context())


async def on_request_started(sender=None, **kwargs) -> None:
    if _janitor is None:
        await start()


def server_loop() -> asyncio.AbstractEventLoop:
    if _loop is None:
        async_to_sync(start)()
    return _loop


def call(coroutine_function, *args, timeout: float = 30):
    """Run a coroutine on the server loop from a view thread and return its result."""
    future = asyncio.run_coroutine_threadsafe(coroutine_function(*args), server_loop())
    return future.result(timeout)


def _notify() -> None:
    with _answered:
        _answered.notify_all()


# ---- entry points ---------------------------------------------------------------------------------

async def ensure_runner(session_id: str) -> None:
    """Make sure the session's queue gets answered: by a local runner (woken), a new one (if the lease is
    free), or the worker that holds the lease (its runner re-reads the queue after every answer)."""
    await start() if _janitor is None else None
    runner = _runners.get(session_id)
    if runner is not None and not runner.finished:
        runner.wake = True
        return
    runner = Runner(session_id)
    _runners[session_id] = runner
    # A clean context: the caller's (a view thread's) would carry asgiref's executor of that thread, and
    # the runner's thread-sensitive ORM calls would then wait for a thread that is waiting for them.
    runner.task = asyncio.get_running_loop().create_task(runner.main(), context=contextvars.Context())


async def abort(session_id: str) -> None:
    runner = _runners.get(session_id)
    if runner is not None and not runner.finished:
        runner.abort()
        return
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is not None:
        await layer.group_send(group_name(session_id), {"type": "runner.abort"})
    if session_id in await free_db(leases.dead_sessions)():
        await ensure_runner(session_id)


async def _janitor_loop() -> None:
    while True:
        try:
            for session_id in await free_db(leases.dead_sessions)():
                if session_id not in _runners:
                    await ensure_runner(session_id)
        except Exception:
            log.exception("runner janitor")
        await asyncio.sleep(JANITOR_SECONDS)


# ---- waiting (view threads) -----------------------------------------------------------------------

def answer_state(session_id: str, user_message_id: str) -> Message | None:
    """The final assistant message answering `user_message_id`, or None while it is still coming."""
    last = (Message.objects.filter(session_id=session_id, role="assistant", info__parentID=user_message_id)
            .order_by("-id").first())
    if last is None:
        return None
    info = last.info
    if not (info.get("time") or {}).get("completed"):
        return None
    if info.get("error") or info.get("finish") not in ("tool-calls", None, "unknown"):
        return last
    newest = leases.last_answered_user_id(session_id)
    if newest > user_message_id or not leases.is_live(session_id):
        return last
    return None


def wait_for_answer(session_id: str, user_message_id: str) -> tuple[Message, list[Part]]:
    started = time.monotonic()
    while True:
        message = answer_state(session_id, user_message_id)
        if message is not None:
            # The runner may carry on in a message of its own (compaction, "continue"): follow it.
            follow = continuation_of(session_id, user_message_id)
            if follow is not None:
                user_message_id, started = follow, time.monotonic()
                continue
            if message.info.get("error") == leases.ABORTED:
                _settle_after_abort(session_id)
            return message, list(Part.objects.filter(message=message).order_by("id"))
        if time.monotonic() - started > 2 and not leases.is_live(session_id):
            call(ensure_runner, session_id)  # nobody is on it (a lost wake-up): kick it again
            started = time.monotonic()
        with _answered:
            _answered.wait(0.25)


def _settle_after_abort(session_id: str, limit: float = 5.0) -> None:
    """The reference sets the status idle before the aborted message's last update, so a client answered
    with it already sees idle: give the runner (its abort clean-up) a moment to let go of the session.
    Bounded, since a prompt sent after the abort keeps it busy."""
    deadline = time.monotonic() + limit
    while leases.is_live(session_id) and time.monotonic() < deadline:
        with _answered:
            _answered.wait(0.05)


def wait_idle(session_id: str) -> None:
    while leases.is_live(session_id) or _runners.get(session_id) is not None:
        with _answered:
            _answered.wait(0.25)


# ---- the runner -----------------------------------------------------------------------------------

class Runner(SubagentsMixin, CompactionMixin, ResumeMixin):
    def __init__(self, session_id: str, *, abort_event: asyncio.Event | None = None):
        self.session_id = session_id
        self.abort_event = abort_event or asyncio.Event()
        self.wake = False
        self.finished = False
        self.task: asyncio.Task | None = None
        self.session: Session | None = None
        self.children: set[str] = set()

    def abort(self) -> None:
        self.abort_event.set()

    def _deregister(self) -> None:
        self.finished = True
        if _runners.get(self.session_id) is self:
            del _runners[self.session_id]
        _notify()

    async def main(self) -> None:
        try:
            async with ThreadSensitiveContext():
                try:
                    await self._main()
                finally:
                    await db(_close_connections)()
        except Exception:
            log.exception("runner of %s failed", self.session_id)
        finally:
            self._deregister()

    async def _main(self) -> None:
        sid = self.session_id
        if not await db(leases.acquire)(sid, WORKER_ID):
            return
        renew = asyncio.create_task(self._renew())
        listener = asyncio.create_task(self._listen())
        try:
            self.session = await db(Session.objects.filter(id=sid).first)()
            if self.session is None:
                return
            await self._recover()
            while True:
                woken, self.wake = self.wake, False
                if await self._resume_interrupted(woken):  # runtime/resume.py: answered after a restart
                    continue
                user = await db(leases.next_pending)(sid)
                if user is None:
                    await db(prune_quietly)(sid)  # old tool outputs (runtime/compaction.py)
                    await self._go_idle()
                    self.wake = False
                    if await db(leases.next_pending)(sid) is not None or self.wake:
                        if await db(leases.acquire)(sid, WORKER_ID):
                            continue
                    self._deregister()  # synchronously after the last look: a later prompt starts a new runner
                    return
                aborted = await self.answer(user)
                if aborted:
                    await self._abort_queue()
                    self.abort_event.clear()
        finally:
            renew.cancel()
            listener.cancel()
            if not self.finished:
                await db(leases.release)(sid, WORKER_ID)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                ids_ = [self.session_id, *self.children]
                for session_id in ids_:
                    await free_db(leases.renew)(session_id, WORKER_ID)
            except Exception:
                log.exception("lease renewal of %s", self.session_id)

    async def _listen(self) -> None:
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is None:
            return
        channel = await layer.new_channel()
        await layer.group_add(group_name(self.session_id), channel)
        try:
            while True:
                message = await layer.receive(channel)
                if message.get("type") == "runner.abort":
                    self.abort()
        finally:
            try:
                await layer.group_discard(group_name(self.session_id), channel)
            except Exception:
                pass

    # ---- status -----------------------------------------------------------------------------------
    async def set_status(self, status: dict, session_id: str | None = None) -> None:
        session_id = session_id or self.session_id
        await db(leases.set_status)(session_id, WORKER_ID, status)
        message_service.publish_for(self.session, "session.status", {"sessionID": session_id, "status": status})

    async def _go_idle(self, session_id: str | None = None) -> None:
        session_id = session_id or self.session_id
        await db(leases.release)(session_id, WORKER_ID)
        publish = message_service.publish_for
        publish(self.session, "session.status", {"sessionID": session_id, "status": leases.IDLE})
        publish(self.session, "session.idle", {"sessionID": session_id})
        await db(_publish_session_updated)(session_id)
        _notify()

    async def _recover(self, session_id: str | None = None) -> None:
        """Close what a dead runner left open: its assistant messages end with MessageAbortedError."""
        session_id = session_id or self.session_id
        session = await db(Session.objects.filter(id=session_id).first)()
        for message in await db(leases.open_assistant_messages)(session_id):
            now = now_ms()
            closed_calls = []
            for part in await db(leases.dangling_parts)(message.id):
                closed = leases.close_part(part.data, now)
                if closed is not None:
                    await db(message_service.part_save)(session=session, part=closed)
                    if closed.get("type") == "tool":
                        closed_calls.append(closed.get("callID"))
            info = {**message.info, "error": leases.ABORTED,
                    "time": {**(message.info.get("time") or {}), "completed": now}}
            waiting = await db(waiting_calls)(session_id, closed_calls)  # their requests stay answerable
            if waiting:
                info[INTERRUPTED_KEY] = waiting
            await db(message_service.message_save)(session=session, info=info)

    async def _abort_queue(self) -> None:
        """An abort also answers the prompts queued behind the aborted one, with an aborted message each."""
        for user in await db(leases.pending_all)(self.session_id):
            info = self._assistant_info(user, user.info.get("agent") or "build",
                                        user.info.get("model") or {})
            info["error"] = leases.ABORTED
            info["time"]["completed"] = now_ms()
            await db(message_service.message_save)(session=self.session, info=info)
        _notify()

    # ---- one user message -------------------------------------------------------------------------
    def _assistant_info(self, user: Message, agent_name: str, model: dict, session_id: str | None = None) -> dict:
        session = self.session
        return {
            "id": ids.ascending("msg"), "sessionID": session_id or session.id, "role": "assistant",
            "time": {"created": now_ms()}, "parentID": user.id,
            "modelID": model.get("modelID") or "", "providerID": model.get("providerID") or "",
            "mode": agent_name, "agent": agent_name,
            "path": {"cwd": self._context.directory if self._context else session.directory,
                     "root": (self._context.worktree if self._context and self._context.vcs
                              else session.directory)},
            "cost": 0, "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        }

    _context = None

    async def answer(self, user: Message, *, session: Session | None = None, resumed: bool = False) -> bool:
        """Run the loop for one user message until the model stops. True when it was aborted. `resumed`:
        the turn goes on after a re-run interrupted call (runtime/resume.py), straight to the model."""
        from sessions_app.runtime.turn import prepare_turn

        session = session or self.session
        info_user = user.info
        agent_name = info_user.get("agent") or "build"
        model = info_user.get("model") or {}
        try:
            turn = await db(prepare_turn)(session, user)
        except Exception as error:
            from agentserver.errors import ApiError

            message = error.message if isinstance(error, ApiError) else f"{type(error).__name__}: {error}"
            if not isinstance(error, ApiError):
                log.exception("preparing the turn of %s", session.id)
            info = self._assistant_info(user, agent_name, model, session.id)
            info["error"] = {"name": "UnknownError", "data": {"message": message}}
            info["time"]["completed"] = now_ms()
            await db(message_service.message_save)(session=session, info=info)
            message_service.publish_for(session, "session.error", {"sessionID": session.id, "error": info["error"]})
            return False
        self._context = turn.context
        compaction = None if resumed else await db(compaction_part)(user.id)  # runtime/compaction.py
        if compaction is not None:
            return await self._compact(session, user, turn, compaction)
        if not resumed and await self._run_subtasks(session, user, turn):
            return True
        user = user if resumed else await self._continue_after_subtasks(session, user)
        step_number = 1 if resumed else 0
        while True:
            step_number += 1
            if self.abort_event.is_set():
                return True
            await self.set_status(leases.BUSY, session.id)
            pairs = await db(_context_messages)(session)
            history = provider_messages(pairs, upto_user_id=user.id)
            last_step = step_number >= turn.max_steps
            if last_step:
                history.append({"role": "user", "content": [{"type": "text", "text": MAX_STEPS_TEXT}]})
            info = self._assistant_info(user, turn.agent["name"], model, session.id)
            await db(message_service.message_save)(session=session, info=info)
            if step_number == 1:
                await self._first_step(session, user, turn)
            await self.set_status(leases.BUSY, session.id)
            processor = StepProcessor(Step(
                session=session, context=turn.context, config=turn.config, agent=turn.agent, info=info,
                system=system_prompt(context=turn.context, agent=turn.agent, user_info=info_user),
                messages=history, tools={} if last_step else turn.tools, rules=turn.rules,
                abort=self.abort_event, run_child=self._child_runner(session, turn),
                set_status=lambda status, sid=session.id: self.set_status(status, sid),
                temperature=turn.agent.get("temperature")))
            outcome = await self._run_step(processor)
            overflow = outcome != "aborted" and await self._auto_compact(session, user, turn, info)
            info["time"]["completed"] = now_ms()
            await db(message_service.message_save)(session=session, info=dict(info))
            _notify()
            if outcome == "aborted":
                return True
            if overflow:
                return False
            if outcome != "continue":
                return False

    async def _first_step(self, session: Session, user: Message, turn) -> None:
        from sessions_app.runtime.title import generate_title

        model = user.info.get("model") or {}
        if session.parent_id is None:
            asyncio.get_running_loop().create_task(generate_title(
                session_id=session.id, context=turn.context, config=turn.config,
                model=(model.get("providerID"), model.get("modelID"))))
        if "summary" not in user.info:
            user.info = {**user.info, "summary": {"diffs": []}}
            await db(message_service.message_save)(session=session, info=user.info)

    def _step(self, session: Session, turn, info: dict, history: list[dict], tools: dict) -> StepProcessor:
        return StepProcessor(Step(
            session=session, context=turn.context, config=turn.config, agent=turn.agent, info=info,
            system=system_prompt(context=turn.context, agent=turn.agent, user_info={}),
            messages=history, tools=tools, rules=turn.rules, abort=self.abort_event,
            run_child=self._child_runner(session, turn),
            set_status=lambda status, sid=session.id: self.set_status(status, sid)))

    async def _run_step(self, processor: StepProcessor, work=None) -> str:
        step = asyncio.create_task(work or processor.run())
        aborted = asyncio.create_task(self.abort_event.wait())
        try:
            await asyncio.wait({step, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if step.done():
            return step.result()
        step.cancel()
        try:
            await step
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("step failed while aborting")
        await processor.finalize_aborted()
        processor.info["error"] = leases.ABORTED
        message_service.publish_for(processor.session, "session.error",
                                    {"sessionID": processor.session.id, "error": leases.ABORTED})
        return "aborted"

def _publish_session_updated(session_id: str) -> None:
    from sessions_app.wire import session_event

    session = Session.objects.select_related("share").filter(id=session_id).first()
    if session is not None:
        message_service.publish_for(session, "session.updated", session_event(session))


def _context_messages(session: Session):
    from sessions_app.selectors import session_context_messages

    return session_context_messages(session=session)


def _close_connections() -> None:
    from django.db import connections

    connections.close_all()
