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

A request's turn: the HTTP handler lets only a few requests run Python at once (agentserver/http/handler.py).
A request thread about to wait for something that is not Python (a child process, another thread's answer)
calls `let_others_run()`, and its turn passes to the next request at once instead of after the handler's
50 ms: `call` does (the loop answers after the runners' callbacks ahead of it), and so does a SQLite write
that has to wait for another thread's (agentserver/db/sqlite)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable

from asgiref.sync import (
    SyncToAsync,
    ThreadSensitiveContext,
    async_to_sync,
    sync_to_async,
)

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


class _ReleasingExecutor(ThreadPoolExecutor):
    """asyncio's default executor (same size), but each job gives its thread's connections back."""

    def submit(self, fn, /, *args, **kwargs):
        return super().submit(_release_after, fn, *args, **kwargs)


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
    """An ORM function made awaitable on the caller's own thread: a runner's (`own_thread`), so its calls stay
    in order on one connection, and a few runners' calls at a time (`_gated`); elsewhere asgiref's
    thread-sensitive thread. Cheap to make: runners wrap a function for every call (`await db(save)(...)`)."""
    async def run(*args, **kwargs):
        owner = _own_thread.get()
        if owner is None:
            return await sync_to_async(functools.partial(_release_after, fn), thread_sensitive=True)(*args, **kwargs)
        if owner.closed:
            raise RuntimeError("a runner's thread was used after its runner ended")
        return await _gated(owner.executor, _release_after, fn, *args, **kwargs)
    return run


# Runners' ORM calls that run at once in a worker. Each runner has a thread of its own, and 32 busy runners
# meant 32 threads wanting the GIL: the loop (health checks, event streams, every request's start) waited
# its turn behind them. The others wait on the loop, which costs nothing; their calls are serialized by the
# GIL and SQLite's writer lock anyway. A call still running after SLOW_CALL_SECONDS (one that waits for a
# child process, an MCP server, a lock) lets the next one start, so no runner waits long for another's.
RUNNER_CALLS_AT_ONCE = 2
SLOW_CALL_SECONDS = 0.05
_runner_gates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # loop → its asyncio.Semaphore


async def _gated(executor, fn: Callable, *args, **kwargs) -> Any:
    loop = asyncio.get_running_loop()
    gate = _runner_gates.get(loop)
    if gate is None:
        gate = _runner_gates[loop] = asyncio.Semaphore(RUNNER_CALLS_AT_ONCE)
    await gate.acquire()
    held = True

    def let_go() -> None:
        nonlocal held
        if held:
            held = False
            gate.release()

    timer = loop.call_later(SLOW_CALL_SECONDS, let_go)
    try:
        return await run_on(executor, fn, *args, **kwargs)
    finally:
        timer.cancel()
        let_go()


def free_db(fn: Callable) -> Callable[..., Awaitable[Any]]:
    """An ORM function made awaitable on any thread of the loop's executor (short reads that need no
    ordering)."""
    async def run(*args, **kwargs):
        return await run_on(None, _release_after, fn, *args, **kwargs)
    return run


def on_executor(executor: concurrent.futures.Executor, fn: Callable) -> Callable[..., Awaitable[Any]]:
    """An ORM function made awaitable on `executor`'s threads: a dedicated thread for one kind of short call
    that must not wait behind the loop's default executor (a lease's renewal)."""
    async def run(*args, **kwargs):
        return await run_on(executor, _release_after, fn, *args, **kwargs)
    return run


def _release_after(fn: Callable, *args, **kwargs) -> Any:
    try:
        return fn(*args, **kwargs)
    finally:
        give_back_connections()


async def run_on(executor: concurrent.futures.Executor | None, fn: Callable, *args, **kwargs) -> Any:
    """fn(*args, **kwargs) on an executor's thread (None: the loop's default), in a copy of the caller's
    context. This is asgiref's sync_to_async without its per-call work (copying every context variable back
    and forth, a shield, its wrappers), which cost as much as the handoff itself, for a runner as much as the
    ORM call it made. As under sync_to_async, a cancelled caller stops waiting at once and the call runs to
    its end."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, contextvars.copy_context().run, _on_thread, loop,
                                      functools.partial(fn, *args, **kwargs))


def _on_thread(loop: asyncio.AbstractEventLoop, call: Callable) -> Any:
    adopt_loop(loop)
    return call()


def adopt_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Tell this thread which loop is the server's, as sync_to_async would: async_to_sync inside (an async
    view behind the synchronous middleware, say) then runs its coroutine there."""
    local = SyncToAsync.threadlocal
    local.main_event_loop = loop
    local.main_event_loop_pid = os.getpid()
    local.task_context = []


class _OwnThread:
    def __init__(self, executor: ThreadPoolExecutor):
        self.executor = executor
        self.closed = False


_own_thread: contextvars.ContextVar[_OwnThread | None] = contextvars.ContextVar("own_thread", default=None)


@contextlib.asynccontextmanager
async def own_thread(executor: ThreadPoolExecutor):
    """`db` calls of this task, and of the tasks it starts, run on `executor` (one thread: they stay in order);
    asgiref's thread-sensitive calls made inside do too."""
    owner = _OwnThread(executor)
    token = _own_thread.set(owner)
    try:
        async with ThreadSensitiveContext(executor=executor):
            yield
    finally:
        owner.closed = True
        _own_thread.reset(token)


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
