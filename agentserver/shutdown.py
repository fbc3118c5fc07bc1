"""The one place a worker's clean-up on exit is registered: end its terminals, language servers, flush the
event outbox. Each hook runs once, on whichever comes first: the ASGI server's lifespan shutdown (uvicorn
stops gracefully on SIGTERM, then re-raises the signal, which would end the process before atexit) or the
interpreter's exit (atexit: management commands, other ASGI servers)."""
from __future__ import annotations

import asyncio
import atexit
import gc
import logging
import threading
from typing import Callable

from agentserver import loop

log = logging.getLogger("agentserver.shutdown")

_hooks: list[Callable[[], object]] = []
_lock = threading.Lock()


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
    """The ASGI lifespan protocol: startup adopts the server loop (agentserver.loop; the first request
    starts the runner machinery); shutdown runs the hooks while the event loop still runs, in a thread
    since they are synchronous."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await loop.capture()
            # What is loaded by now (Django, the apps, settings) lives as long as the process: frozen out of
            # the collector's way, a full collection no longer walks it (2-3 % of a request's time).
            gc.collect()
            gc.freeze()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await asyncio.to_thread(run_hooks)
            await send({"type": "lifespan.shutdown.complete"})
            return
