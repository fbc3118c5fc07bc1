"""The runners of this worker (the Supervisor: which session each one answers, the only writer of that), the
worker's lease-holder name, the janitor that adopts sessions whose runner died anywhere, and the public entry
points services call from their threads: `kick` (make sure a session's queue gets answered), `abort`.

Entry points: the first request captures the server loop and starts the janitor (an async
`request_started` receiver connected in SessionsAppConfig.ready)."""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Iterator

from django.conf import settings

from agentserver import clock
from agentserver.workers import liveness as workers
from agentserver.workers import loop as server_loop
from agentserver.workers import shutdown
from agentserver.workers.loop import free_db
from sessions_app.runtime import leases, metering, resume, wakeups
from sessions_app.runtime.runner import Runner, group_name

log = logging.getLogger(__name__)
JANITOR_SECONDS = max(leases.LEASE_MS / 2000, 1.0)
STRANDED_FIRST_LOOK_BACK_MS = 24 * 3600 * 1000
STRANDED_LOOK_BACK_MS = 3600 * 1000
# A prompt is left to the worker that stored it for a lease's time (by the ids' clock, the storing host's: a
# shorter grace let a host whose clock runs ahead take fresh prompts from a live one).
STRANDED_AFTER_MS = max(leases.LEASE_MS, int(JANITOR_SECONDS * 1000))


class ChildRun:
    """A child session answered inline by its parent's task call: it runs here, under the parent's abort."""

    def __init__(self, abort_event: asyncio.Event):
        self._abort_event = abort_event

    def abort(self) -> None:
        self._abort_event.set()

    def wake_up(self) -> None:
        """A prompt queued on the child waits for the parent's call to end (its runner then answers it)."""


class Supervisor:
    """The only owner of which sessions run in this worker: a Runner each, or a ChildRun while a parent's task
    call answers a child session. Runners and subtasks ask it to add or drop themselves; nothing else
    writes `_running`. Loop thread only."""

    def __init__(self, worker_id: str):
        self.worker_id = worker_id
        self._running: dict[str, Runner | ChildRun] = {}
        self._janitor: asyncio.Task | None = None
        self._draining = False  # this worker is stopping: no new turns here
        self._drained: asyncio.Task | None = None
        self._stop_registered = False

    def is_running_here(self, session_id: str) -> bool:
        return session_id in self._running

    async def start(self) -> None:
        """Capture the server loop and start the janitor (idempotent; runs on the loop)."""
        loop = await server_loop.capture()
        if not self._stop_registered:
            self._stop_registered = True
            shutdown.on_stop(self._begin_drain)
            shutdown.on_exit(self._wait_drained)
        if self._janitor is None or self._janitor.done():
            self._janitor = loop.create_task(self._janitor_loop(), context=contextvars.Context())

    @property
    def started(self) -> bool:
        return self._janitor is not None

    async def ensure_runner(self, session_id: str) -> None:
        """Make sure the session's queue gets answered: by a local runner (woken), a new one (if the lease is
        free), or the worker that holds the lease (its runner re-reads the queue after every answer)."""
        if self._janitor is None:
            await self.start()
        current = self._running.get(session_id)
        if current is not None:
            current.wake_up()
            return
        if self._draining:
            await free_db(_hand_over_unstarted)(session_id, self.worker_id)
            return
        runner = Runner(session_id, supervisor=self)
        self._running[session_id] = runner
        # A clean context: the caller's would carry asgiref's executor of a view thread (see agentserver.workers.loop).
        runner.task = asyncio.get_running_loop().create_task(runner.main(), context=contextvars.Context())

    def runner_done(self, runner: Runner) -> None:
        """A runner lets go of its session (synchronously after its last look at the queue)."""
        if self._running.get(runner.session_id) is runner:
            del self._running[runner.session_id]
        wakeups.wake(runner.session_id)  # a runner that failed says nothing on the bus

    @contextlib.contextmanager
    def running_child(self, session_id: str, abort_event: asyncio.Event) -> Iterator[None]:
        """While a parent's task call answers child session `session_id` here."""
        child = ChildRun(abort_event)
        self._running[session_id] = child
        try:
            yield
        finally:
            if self._running.get(session_id) is child:
                del self._running[session_id]

    async def abort_runner(self, session_id: str) -> None:
        current = self._running.get(session_id)
        if current is not None:
            current.abort()
            return
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is not None:
            await layer.group_send(group_name(session_id), {"type": "runner.abort"})
        if session_id in await free_db(leases.dead_sessions)():
            await self.ensure_runner(session_id)

    async def _janitor_loop(self) -> None:
        """Adopts sessions whose runner died (an expired lease) and sessions with a stored prompt no runner
        took (its host died between storing it and taking the lease). A prompt younger than a lease is left to
        the worker that stored it; the first round looks back a day (every host may have been
        down), later ones an hour. Each round also ends the model calls dead workers left in flight on sessions
        nobody adopts (a title's call, a session left idle): an index lookup, usually of nothing."""
        look_back_ms = STRANDED_FIRST_LOOK_BACK_MS
        while not self._draining:
            try:
                now = clock.now_ms()
                stranded = await free_db(leases.stranded_sessions)(
                    since_ms=now - look_back_ms, until_ms=now - STRANDED_AFTER_MS)
                look_back_ms = STRANDED_LOOK_BACK_MS
                for session_id in [*await free_db(leases.dead_sessions)(), *stranded]:
                    if session_id not in self._running:
                        await self.ensure_runner(session_id)
            except Exception:
                log.exception("runner janitor")
            try:
                await free_db(metering.sweep_dead_calls)()
            except Exception:
                log.exception("ending dead workers' calls in flight")
            await asyncio.sleep(JANITOR_SECONDS)


    # ---- a graceful stop --------------------------------------------------------------------------------

    def _begin_drain(self) -> None:
        """On SIGTERM (agentserver.workers.shutdown.on_stop), on the loop: take no new turns; each runner finishes the
        turn it is on, then hands its session to the other workers (runtime/leases.py hand_over)."""
        if self._draining:
            return
        self._draining = True
        runners = [r for r in self._running.values() if isinstance(r, Runner) and not r.finished]
        for runner in runners:
            runner.hand_over()
        self._drained = asyncio.get_running_loop().create_task(self._drain(runners), context=contextvars.Context())

    async def _drain(self, runners: list[Runner]) -> None:
        tasks = [r.task for r in runners if r.task is not None and not r.task.done()]
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=settings.GRACE_SECONDS)
        if late:
            # Past the grace period: what still runs stops here, its message closed as aborted, and is handed
            # over; the adopting worker answers the queue and resumes calls that waited on the user
            # (runtime/resume.py).
            log.warning("stopping with %d turns still running after %.0f s: handing them over", len(late),
                        settings.GRACE_SECONDS)
            running = [r for r in runners if not r.finished]
            for runner in running:
                runner.lost = True  # no renewal, no further turn
                runner.task.cancel()
            await asyncio.wait(late, timeout=5)
            for runner in running:
                # Given up on purpose: the turn ends aborted here, the adopting worker does not go on with it.
                await free_db(resume.recover)(runner.session_id, go_on=False)
                await runner.lease.hand_over(on_any_thread=True)

    async def _until_drained(self) -> None:
        if not self._draining:
            self._begin_drain()
        if self._drained is not None:
            await self._drained

    def _wait_drained(self) -> None:
        """The exit hook: the worker ends only once its runners are done or handed over."""
        loop = server_loop.captured()
        if loop is None or loop.is_closed() or (not self._draining and not self._running):
            return  # nothing runs here any more (a test process's exit, or an idle worker)
        try:
            server_loop.call(self._until_drained, timeout=settings.GRACE_SECONDS + 15)
        except Exception:
            log.warning("could not wait for the runners to hand over", exc_info=True)


def _hand_over_unstarted(session_id: str, worker_id: str) -> None:
    """A prompt that reached a stopping worker: another worker's janitor answers it."""
    if leases.acquire(session_id, worker_id):
        leases.hand_over(session_id, worker_id)


SUPERVISOR = Supervisor(workers.WORKER_ID)  # leases name the worker as its liveness key does


def is_running_here(session_id: str) -> bool:
    return SUPERVISOR.is_running_here(session_id)


async def on_request_started(sender=None, **kwargs) -> None:
    if not SUPERVISOR.started:
        await SUPERVISOR.start()


# ---- from threads (services) ------------------------------------------------------------------------

def kick(session_id: str) -> None:
    server_loop.call(SUPERVISOR.ensure_runner, session_id)


def abort(session_id: str, *, timeout: float = 30) -> None:
    server_loop.call(SUPERVISOR.abort_runner, session_id, timeout=timeout)


def stop_runners(session_ids: list[str], *, limit: float = 5.0) -> None:
    """Abort the agent loops of sessions about to vanish, wherever they run, and let them wind down (they
    write their aborted message last). Best effort and bounded: deletion goes ahead regardless."""
    def live() -> list[str]:
        return leases.live_sessions(session_ids)

    running = live()
    if not running:
        return
    try:
        for session_id in running:
            abort(session_id, timeout=5)
    except Exception:
        log.warning("could not abort runners of %s before delete", running, exc_info=True)
        return
    deadline = time.monotonic() + limit
    for session_id in running:  # each goes idle with an event (runtime/wakeups.py)
        with wakeups.watching(session_id) as watch:
            while leases.is_live(session_id) and time.monotonic() < deadline:
                watch.wait(deadline - time.monotonic())


def wake_if_orphaned(session_id: str) -> None:
    """After a reply to a permission or question: when no runner is on the session, start one so a call
    interrupted by a restart resumes (runtime/resume.py)."""
    from sessions_app.runtime.resume import resumable

    if not leases.is_live(session_id) and resumable(session_id) is not None:
        kick(session_id)
