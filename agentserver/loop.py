"""The one bridge between sync code (DRF views, services, ORM threads) and the server's event loop.

The server runs one asyncio loop per worker; long-lived work (agent runners, terminals, MCP connections) lives
on it. A view thread reaches it with `call(...)`; coroutine code reaches the ORM with `db(...)`.

`call` runs the coroutine in an empty contextvars context: the caller's (a view thread's) would carry
asgiref's executor of that thread, and a thread-sensitive ORM call made by the coroutine would then wait
for a thread that is itself waiting for the coroutine.

Database connections: a request gives its connection back when it ends (request_finished), but the threads
behind `db`, `free_db` and the loop's default executor (asyncio.to_thread, sync_to_async without thread
sensitivity) see no request. They give theirs back after every call instead: on PostgreSQL the connection
returns to the pool (a cheap hand-over), where a thread that kept it would hold one of the pool's few
connections for the worker's life, and a busy worker would then wait 30 s for a connection (the pool's
timeout). SQLite keeps its per-thread connection (CONN_MAX_AGE=None), so there this costs nothing.

A request's turn: the HTTP handler lets only a few requests run Python at once (agentserver/http_handler.py).
A request thread about to wait for something that is not Python (a child process, another thread's answer)
calls `let_others_run()`, and its turn passes to the next request at once instead of after the handler's
50 ms: `call` does (the loop answers after the runners' callbacks ahead of it), and so does a SQLite write
that has to wait for another thread's (agentserver/sqlite)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable

from asgiref.sync import async_to_sync, sync_to_async

_loop: asyncio.AbstractEventLoop | None = None
_bind_lock = threading.Lock()


async def capture() -> asyncio.AbstractEventLoop:
    """Remember the running loop as the server loop (at the ASGI lifespan's startup, or the first request
    under a server without one)."""
    return capture_running()


def capture_running() -> asyncio.AbstractEventLoop:
    """capture() for plain code running on the loop (event streams, publishers on the loop): remembers the
    loop and gives it the default executor whose threads give their database connections back. Idempotent
    and cheap: publishers call it for every event."""
    global _loop
    loop = asyncio.get_running_loop()
    if _loop is not loop:
        loop.set_default_executor(_ReleasingExecutor(thread_name_prefix="loop-executor"))
        _loop = loop
    return loop


def give_back_connections() -> None:
    """Return this thread's database connections (to the pool on PostgreSQL) unless a transaction holds one."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


def _releasing(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            give_back_connections()
    return run


class _ReleasingExecutor(ThreadPoolExecutor):
    """asyncio's default executor (same size), but each job gives its thread's connections back."""

    def submit(self, fn, /, *args, **kwargs):
        return super().submit(_releasing(fn), *args, **kwargs)


def captured() -> asyncio.AbstractEventLoop | None:
    return _loop


def call_soon(callback: Callable[..., Any], *args) -> bool:
    """Run callback(*args) on the server loop from any thread; False when there is no loop (yet, or any
    more: closed during shutdown)."""
    loop = _loop
    if loop is None or loop.is_closed():
        return False
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # closed between the check and the call
        return False
    return True


def start(coroutine: Awaitable[Any]) -> concurrent.futures.Future | None:
    """Run a coroutine on the server loop from any thread without waiting for it (in a fresh context: it must
    not hold on to a request's); its future, to cancel or wait on, or None when there is no loop."""
    loop = _loop
    if loop is None or loop.is_closed():
        coroutine.close()
        return None
    return contextvars.Context().run(asyncio.run_coroutine_threadsafe, coroutine, loop)


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
    let_others_run()  # the loop may be busy with runners: a request waiting for it holds no turn
    return future.result(timeout)


def on_loop_thread() -> bool:
    try:
        return asyncio.get_running_loop() is _loop
    except RuntimeError:
        return False


def db(fn: Callable) -> Callable[..., Awaitable[Any]]:
    """An ORM function made awaitable in the caller's thread-sensitive context (a runner's own thread)."""
    return sync_to_async(_releasing(fn), thread_sensitive=True)


def free_db(fn: Callable) -> Callable[..., Awaitable[Any]]:
    """An ORM function made awaitable on any pool thread (short reads that need no ordering)."""
    return sync_to_async(_releasing(fn), thread_sensitive=False)


_turn = threading.local()


@contextlib.contextmanager
def request_turn(give_up: Callable[[], None]):
    """Around a request's work on its thread (the HTTP handler): `give_up` hands its turn to the next request
    (thread-safe; once is enough)."""
    _turn.give_up = give_up
    try:
        yield
    finally:
        _turn.give_up = None


def let_others_run() -> None:
    """This thread is about to block outside Python: the request it serves, if any, gives its turn up."""
    give_up = getattr(_turn, "give_up", None)
    if give_up is not None:
        _turn.give_up = None
        give_up()
