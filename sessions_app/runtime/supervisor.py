"""The runners of this worker: which session each one answers, the worker's lease-holder name, the janitor
that adopts sessions whose runner died anywhere, and the public entry points services call from their
threads: `kick` (make sure a session's queue gets answered), `abort`, `notify` / `wait_for_change`.

Entry points: the first request captures the server loop and starts the janitor (an async
`request_started` receiver connected in SessionsAppConfig.ready)."""
from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import uuid

from django.conf import settings

from agentserver import loop as server_loop
from agentserver import shutdown
from agentserver.loop import free_db
from sessions_app.runtime import leases
from sessions_app.runtime.runner import Runner, group_name

log = logging.getLogger(__name__)
WORKER_ID = uuid.uuid4().hex
JANITOR_SECONDS = max(leases.LEASE_MS / 2000, 1.0)

_janitor: asyncio.Task | None = None
_draining = False  # this worker is stopping: no new turns here
_drained: asyncio.Task | None = None
_stop_registered = False
# session id → Runner (or a child session's RunScope while a task call answers it)
_runners: dict = {}
_changed = threading.Condition()


def notify() -> None:
    """Something a waiting thread may care about happened (an answer, a runner that went idle)."""
    with _changed:
        _changed.notify_all()


def wait_for_change(timeout: float) -> None:
    with _changed:
        _changed.wait(timeout)


def is_running_here(session_id: str) -> bool:
    return _runners.get(session_id) is not None


# ---- on the loop ----------------------------------------------------------------------------------------

async def start() -> None:
    """Capture the server loop and start the janitor (idempotent; runs on the loop)."""
    global _janitor, _stop_registered
    loop = await server_loop.capture()
    if not _stop_registered:
        _stop_registered = True
        shutdown.on_stop(_begin_drain)
        shutdown.on_exit(_wait_drained)
    if _janitor is None or _janitor.done():
        _janitor = loop.create_task(_janitor_loop(), context=contextvars.Context())


async def on_request_started(sender=None, **kwargs) -> None:
    if _janitor is None:
        await start()


async def ensure_runner(session_id: str) -> None:
    """Make sure the session's queue gets answered: by a local runner (woken), a new one (if the lease is
    free), or the worker that holds the lease (its runner re-reads the queue after every answer)."""
    if _janitor is None:
        await start()
    runner = _runners.get(session_id)
    if runner is not None and not runner.finished:
        runner.wake = True
        return
    if _draining:
        await free_db(_hand_over_unstarted)(session_id)
        return
    runner = Runner(session_id, worker_id=WORKER_ID, registry=_runners, notify=notify)
    _runners[session_id] = runner
    # A clean context: the caller's would carry asgiref's executor of a view thread (see agentserver.loop).
    runner.task = asyncio.get_running_loop().create_task(runner.main(), context=contextvars.Context())


async def abort_runner(session_id: str) -> None:
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
    while not _draining:
        try:
            for session_id in await free_db(leases.dead_sessions)():
                if session_id not in _runners:
                    await ensure_runner(session_id)
        except Exception:
            log.exception("runner janitor")
        await asyncio.sleep(JANITOR_SECONDS)


# ---- a graceful stop ------------------------------------------------------------------------------------

def _begin_drain() -> None:
    """On SIGTERM (agentserver.shutdown.on_stop), on the loop: take no new turns; each runner finishes the
    turn it is on, then hands its session to the other workers (runtime/leases.py hand_over)."""
    global _draining, _drained
    if _draining:
        return
    _draining = True
    runners = [r for r in _runners.values() if isinstance(r, Runner) and not r.finished]
    for runner in runners:
        runner.hand_over()
    _drained = asyncio.get_running_loop().create_task(_drain(runners), context=contextvars.Context())


async def _drain(runners: list[Runner]) -> None:
    tasks = [r.task for r in runners if r.task is not None and not r.task.done()]
    if not tasks:
        return
    _, late = await asyncio.wait(tasks, timeout=settings.GRACE_SECONDS)
    if late:
        # Past the grace period: what still runs stops here and is handed over as it stands; the adopting
        # worker closes the interrupted message and resumes interrupted calls, as after a crash
        # (runtime/resume.py).
        log.warning("stopping with %d turns still running after %.0f s: handing them over", len(late),
                    settings.GRACE_SECONDS)
        running = [r for r in runners if not r.finished]
        for runner in running:
            runner.lost = True  # no renewal, no further turn
            runner.task.cancel()
        await asyncio.wait(late, timeout=5)
        for runner in running:
            await free_db(leases.hand_over)(runner.session_id, runner.worker_id)


async def _until_drained() -> None:
    if not _draining:
        _begin_drain()
    if _drained is not None:
        await _drained


def _wait_drained() -> None:
    """The exit hook: the worker ends only once its runners are done or handed over."""
    try:
        server_loop.call(_until_drained, timeout=settings.GRACE_SECONDS + 15)
    except Exception:  # noqa: BLE001  (no loop any more: nothing runs here)
        log.warning("could not wait for the runners to hand over", exc_info=True)


def _hand_over_unstarted(session_id: str) -> None:
    """A prompt that reached a stopping worker: another worker's janitor answers it."""
    if leases.acquire(session_id, WORKER_ID):
        leases.hand_over(session_id, WORKER_ID)


# ---- from threads (services) ------------------------------------------------------------------------

def kick(session_id: str) -> None:
    server_loop.call(ensure_runner, session_id)


def abort(session_id: str, *, timeout: float = 30) -> None:
    server_loop.call(abort_runner, session_id, timeout=timeout)


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
    except Exception:  # noqa: BLE001
        log.warning("could not abort runners of %s before delete", running, exc_info=True)
        return
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and live():
        time.sleep(0.05)


def wake_if_orphaned(session_id: str) -> None:
    """After a reply to a permission or question: when no runner is on the session, start one so a call
    interrupted by a restart resumes (runtime/resume.py)."""
    from sessions_app.runtime.resume import resumable

    if not leases.is_live(session_id) and resumable(session_id) is not None:
        kick(session_id)
