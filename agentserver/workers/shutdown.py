"""The one place a worker's clean-up on exit is registered: end its terminals, language servers, flush the
event outbox. Each hook runs once, on whichever comes first: the ASGI server's lifespan shutdown (uvicorn
stops gracefully on SIGTERM, then re-raises the signal, which would end the process before atexit) or the
interpreter's exit (atexit: management commands, other ASGI servers).

A graceful stop also has a first moment: `on_stop` callbacks run on the event loop as soon as SIGTERM (or
SIGINT) arrives, before the ASGI server waits for open connections to finish: the agent runners stop taking
new turns, and event streams end (their clients reconnect to another worker and replay what they missed),
so the server is not left waiting on streams that never end."""
from __future__ import annotations

import asyncio
import atexit
import gc
import logging
import signal
import threading
from typing import Callable

from agentserver.workers import loop

log = logging.getLogger("agentserver.workers.shutdown")

_hooks: list[Callable[[], object]] = []
_stop_callbacks: list[Callable[[], object]] = []
_lock = threading.Lock()
_stopping = False


def on_stop(callback: Callable[[], object]) -> None:
    """`callback()` runs on the event loop when the worker is told to stop (SIGTERM, SIGINT); at once when it
    already was."""
    with _lock:
        _stop_callbacks.append(callback)
        late = _stopping
    if late:
        _run_stop_callback(callback)


def stopping() -> bool:
    return _stopping


def begin_stop() -> None:
    """On the loop thread (a signal handler or a test): run the stop callbacks once."""
    global _stopping
    with _lock:
        if _stopping:
            return
        _stopping = True
        callbacks = list(_stop_callbacks)
    for callback in callbacks:
        _run_stop_callback(callback)


def _run_stop_callback(callback: Callable[[], object]) -> None:
    try:
        callback()
    except Exception:  # noqa: BLE001
        log.exception("stop callback %r failed", callback)


def _chain_stop_signals() -> None:
    """Run begin_stop, then the ASGI server's own handler (uvicorn's graceful shutdown)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(number)
        if not callable(previous) or getattr(previous, "_agentserver_stop", False):
            continue

        def handler(signum, frame, previous=previous):
            server_loop = loop.captured()
            if server_loop is not None and not server_loop.is_closed():
                server_loop.call_soon_threadsafe(begin_stop)  # not inside whatever the signal interrupted
            else:
                begin_stop()
            previous(signum, frame)

        handler._agentserver_stop = True
        signal.signal(number, handler)


def on_exit(hook: Callable[[], object]) -> None:
    with _lock:
        _hooks.append(hook)


def run_hooks() -> None:
    """Run (and forget) every registered hook, last registered first, as atexit would."""
    while True:
        with _lock:
            if not _hooks:
                return
            hook = _hooks.pop()
        try:
            hook()
        except Exception:  # noqa: BLE001  (one failing clean-up must not skip the others)
            log.exception("shutdown hook %r failed", hook)


atexit.register(run_hooks)


async def lifespan(scope, receive, send) -> None:
    """The ASGI lifespan protocol: startup adopts the server loop (agentserver.workers.loop; the first request
    starts the runner machinery); shutdown runs the hooks while the event loop still runs, in a thread
    since they are synchronous."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await loop.capture()
            _chain_stop_signals()
            # What is loaded by now (Django, the apps, settings) lives as long as the process: frozen out of
            # the collector's way, a full collection no longer walks it (2-3 % of a request's time).
            gc.collect()
            gc.freeze()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await asyncio.to_thread(run_hooks)
            await send({"type": "lifespan.shutdown.complete"})
            return
