"""The one bridge between sync code (DRF views, services, ORM threads) and the server's event loop.

The server runs one asyncio loop per worker; long-lived work (agent runners, terminals, MCP connections) lives
on it. A view thread reaches it with `call(...)`; coroutine code reaches the ORM with `db(...)`.

`call` runs the coroutine in an empty contextvars context: the caller's (a view thread's) would carry
asgiref's executor of that thread, and a thread-sensitive ORM call made by the coroutine would then wait
for a thread that is itself waiting for the coroutine."""
from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from typing import Any, Awaitable, Callable

from asgiref.sync import async_to_sync, sync_to_async

_loop: asyncio.AbstractEventLoop | None = None
_bind_lock = threading.Lock()


async def capture() -> asyncio.AbstractEventLoop:
    """Remember the running loop as the server loop (idempotent; runs on the loop)."""
    global _loop
    _loop = asyncio.get_running_loop()
    return _loop


def captured() -> asyncio.AbstractEventLoop | None:
    return _loop


def server_loop() -> asyncio.AbstractEventLoop:
    """The server loop; from a view thread before any request captured it, `async_to_sync` runs on it."""
    if _loop is None:
        with _bind_lock:
            if _loop is None:
                async_to_sync(capture)()
    if _loop is None:
        raise RuntimeError("no server event loop")
    return _loop


def call(work: Callable[..., Awaitable[Any]] | Awaitable[Any], *args, timeout: float = 30) -> Any:
    """Run a coroutine (or a coroutine function with its arguments) on the server loop from a sync thread
    and return its result."""
    coroutine = work if inspect.isawaitable(work) else work(*args)
    future = contextvars.Context().run(asyncio.run_coroutine_threadsafe, coroutine, server_loop())
    return future.result(timeout)


def on_loop_thread() -> bool:
    try:
        return asyncio.get_running_loop() is _loop
    except RuntimeError:
        return False


def db(fn: Callable) -> Callable[..., Awaitable[Any]]:
    """An ORM function made awaitable in the caller's thread-sensitive context (a runner's own thread)."""
    return sync_to_async(fn, thread_sensitive=True)


def free_db(fn: Callable) -> Callable[..., Awaitable[Any]]:
    """An ORM function made awaitable on any pool thread (short reads that need no ordering)."""
    return sync_to_async(fn, thread_sensitive=False)
