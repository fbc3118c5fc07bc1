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
import uuid
from collections.abc import Iterator

from agentserver import loop as server_loop
from agentserver.clock import now_ms
from agentserver.loop import free_db
from sessions_app.runtime import leases, wakeups
from sessions_app.runtime.runner import Runner, group_name

log = logging.getLogger(__name__)
WORKER_ID = uuid.uuid4().hex
JANITOR_SECONDS = max(leases.LEASE_MS / 2000, 1.0)


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

    def is_running_here(self, session_id: str) -> bool:
        return session_id in self._running

    async def start(self) -> None:
        """Capture the server loop and start the janitor (idempotent; runs on the loop)."""
        loop = await server_loop.capture()
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
        runner = Runner(session_id, supervisor=self)
        self._running[session_id] = runner
        # A clean context: the caller's would carry asgiref's executor of a view thread (see agentserver.loop).
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
        while True:
            try:
                for session_id in await free_db(leases.dead_sessions)():
                    if session_id not in self._running:
                        await self.ensure_runner(session_id)
            except Exception:
                log.exception("runner janitor")
            await asyncio.sleep(JANITOR_SECONDS)


SUPERVISOR = Supervisor(WORKER_ID)


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
    from sessions_app.models import SessionLease

    def live() -> list[str]:
        return list(SessionLease.objects.filter(session_id__in=session_ids, expires_at__gt=now_ms())
                    .exclude(holder="").values_list("session_id", flat=True))

    running = live()
    if not running:
        return
    try:
        for session_id in running:
            abort(session_id, timeout=5)
    except Exception:  # noqa: BLE001
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
