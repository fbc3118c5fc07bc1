"""The agent runner of one session: holds the session's lease (runtime/leases.py) while it answers the
queued user messages (runtime/message_queue.py) one after the other, then goes idle and lets go.

It runs as one asyncio task on the worker's loop, in the worker that holds the lease; the supervisor
(runtime/supervisor.py) creates it, wakes it (`wake_up`) and is told when it lets go (`runner_done`). Its ORM calls run in its
own thread (agentserver/workers/loop.py own_thread), one dedicated thread per runner, taken from threads kept between runners. Abort: the supervisor calls `abort()`
locally; from another worker the request arrives on channel-layer group `session.<id>`, which the runner
listens on. Restart safety: after acquiring the lease it first closes what a dead runner left open
(runtime/resume.py recover)."""
from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from agentserver.workers.loop import db, own_thread
from sessions_app.runtime import leases, resume, turn
from sessions_app.runtime.compaction import prune_quietly
from sessions_app.runtime.lease_keeper import LeaseKeeper
from sessions_app.runtime.message_queue import next_pending
from sessions_app.runtime.scope import RunScope
from sessions_app.store.rows import session_row

log = logging.getLogger(__name__)
RENEW_SECONDS = max(leases.LEASE_MS / 3000, 0.2)


class RunnerThreads:
    """The single-thread executors behind runners' ORM calls, kept for the next runner when one ends (on the
    loop only). A runner that made its own started a thread on the loop and, when it ended, one more to join
    it: each start waits for the new thread to get the GIL, so 32 runners starting together held the loop
    for up to half a second while 32 others ran Python, and every request waited for the loop meanwhile."""

    def __init__(self, keep: int = 64):
        self._idle: list[ThreadPoolExecutor] = []
        self._keep = keep

    def take(self) -> ThreadPoolExecutor:
        return self._idle.pop() if self._idle else ThreadPoolExecutor(max_workers=1, thread_name_prefix="runner")

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        if len(self._idle) < self._keep:
            self._idle.append(executor)
        else:
            executor.shutdown(wait=False)


THREADS = RunnerThreads()


def group_name(session_id: str) -> str:
    return f"session.{session_id}"


class Runner:
    def __init__(self, session_id: str, *, supervisor):
        self.session_id = session_id
        self.supervisor = supervisor  # runtime/supervisor.py Supervisor
        self.lease = LeaseKeeper(session_id, supervisor.worker_id)
        self.abort_event = asyncio.Event()
        self._woken = False           # a kick arrived since the runner last looked at the queue
        self._let_go = False
        self.lost = False  # the lease went to another worker, or could not be renewed in time
        self.handing_over = False  # this worker is stopping: after the running turn, others take the session
        self.task: asyncio.Task | None = None
        self.scope: RunScope | None = None
        self._resume_checked = False

    def abort(self) -> None:
        self.abort_event.set()

    def wake_up(self) -> None:
        self._woken = True

    def hand_over(self) -> None:
        """Finish the running turn (if any), then leave the session to another worker."""
        self.handing_over = True
        self._woken = True

    @property
    def finished(self) -> bool:
        return self._let_go

    def _deregister(self) -> None:
        if not self._let_go:
            self._let_go = True
            self.supervisor.runner_done(self)

    async def main(self) -> None:
        executor = THREADS.take()
        try:
            async with own_thread(executor):
                try:
                    await self._hold_lease()
                finally:
                    await db(_close_connections)()
        except Exception:
            log.exception("runner of %s failed", self.session_id)
        finally:
            self._deregister()
            THREADS.give_back(executor)

    async def _hold_lease(self) -> None:
        sid = self.session_id
        if not await self.lease.acquire():
            return
        renew = asyncio.create_task(self._renew())
        listener = asyncio.create_task(self._listen())
        try:
            session = await db(session_row)(sid)
            if session is None:
                return
            self.scope = RunScope(session=session, lease=self.lease, supervisor=self.supervisor,
                                  abort_event=self.abort_event)
            await db(resume.recover)(sid)
            await self._drain()
        finally:
            renew.cancel()
            listener.cancel()
            if not self._let_go and self.lease.holds_own:
                await self.lease.release()

    async def _drain(self) -> None:
        """Answer the queue in order; idle when it is empty (and stay only if a prompt slipped in)."""
        scope, sid = self.scope, self.session_id
        while not self.lost:
            if self.handing_over:
                await self.lease.hand_over()
                self._deregister()
                return
            woken, self._woken = self._woken, False
            if await self._resume(woken):
                continue
            user = await db(next_pending)(sid)
            if user is None:
                await db(prune_quietly)(sid, scope.config)  # old tool outputs (runtime/compaction.py)
                if self._woken:
                    continue  # woken meanwhile (a prompt, or an answer that resumes a call): look again
                await scope.go_idle()
                # A wake that arrives while going idle is kept: it may be an answer to resume a call, which
                # no queue query would find.
                if await db(next_pending)(sid) is not None or self._woken:
                    if await self.lease.acquire():
                        continue
                self._deregister()  # synchronously after the last look: a later prompt starts a new runner
                return
            if await turn.TURNS.answer(scope, user):
                if self.lost:
                    return
                if not self.handing_over:  # a stop's abort leaves the queue to the adopting worker
                    await scope.abort_queue()
                self.abort_event.clear()

    async def _resume(self, woken: bool) -> bool:
        """Looks for an interrupted call to re-run only when the runner starts, after a resume and when woken:
        an answer kicks a runner only while no lease is live (supervisor.wake_if_orphaned), so a runner busy
        with other work never has anything to resume (and its idle path stays one query short)."""
        if self._resume_checked and not woken:
            return False
        self._resume_checked = True
        resumed = (await resume.resume_interrupted(self.scope, turn.TURNS)
                   or await resume.continue_cut_turn(self.scope, turn.TURNS))
        if resumed:
            self._resume_checked = False  # look again: a second interrupted call may be answered
        return resumed

    async def _renew(self) -> None:
        """Keep the lease; a runner that lost it (expired, then adopted elsewhere) or cannot renew it before
        it would expire stops at once: another worker may be answering the session by now. A lease the runner
        released or handed over itself is not renewed (LeaseKeeper), and its absence is no loss."""
        held_until = time.monotonic() + leases.LEASE_MS / 1000
        while not self.lost:
            await asyncio.sleep(RENEW_SECONDS)
            if self.lost:
                return
            asked = time.monotonic()
            try:
                renewed = await self.lease.renew()
                if renewed is False:
                    return self._lost("lost its lease")
                held_until = asked + leases.LEASE_MS / 1000
            except Exception:
                log.exception("lease renewal of %s", self.session_id)
                if time.monotonic() >= held_until:
                    return self._lost("could not renew its lease before it expired")

    def _lost(self, why: str) -> None:
        """Stop as an abort does (the step's model call and tools end), but write nothing more: the step's
        message, the queue and the session's status are the next holder's, which goes on with the turn."""
        log.warning("runner of %s %s: stopping", self.session_id, why)
        self.lost = True
        self.lease.forget()
        self.abort()

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


def _close_connections() -> None:
    from django.db import connections

    connections.close_all()
