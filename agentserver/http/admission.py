"""Admission of requests to the HTTP pool threads: at most `running` requests do Python work at once, in the
order they arrived, and a thread that finishes one goes straight on to the next.

Why here and not a semaphore on the event loop: with the semaphore, every request's turn began and ended on
the loop, so between two requests the slot sat idle while the loop woke a pool thread and while the pool
thread's answer woke the loop, two hand-overs between CPUs. On the 2-core (virtual) machine the process was
idle half the time at 32 clients, waiting on those wake-ups. Here the queue and the slots live with the
threads: the loop only adds a request to the queue, the thread holding a slot takes the next request itself,
and its answers go back to the loop without the slot waiting for them.

A request that holds its slot for longer than `slow_after` seconds (a sync `session.prompt` waiting for its
answer, an MCP call, a large search) gives it up and goes on running on its thread, so slow requests never
starve quick ones; one about to wait for a child process gives it up at once (agentserver.workers.loop.let_others_run).

Two queues, taken in turns: requests that only read (GET, HEAD, OPTIONS) and the others. Arrival order alone
put a `GET /global/health` behind every prompt of a batch: 32 sync prompts arriving at once each held the one
slot for about 40 ms (their work before they wait for the answer, slowed by the 32 runners they start) and
a health check that came next waited 1.7 s in the queue for 0.6 ms of work. Taken in turns, a request of
either kind waits behind at most one of the other kind for each of its own kind ahead of it, and arrival
order holds within each kind.
"""
from __future__ import annotations

import asyncio
import collections
import contextvars
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable


class _Job:
    __slots__ = ("function", "args", "context", "future", "loop", "started", "released")

    def __init__(self, function, args, context, future, loop):
        self.function, self.args, self.context, self.future, self.loop = function, args, context, future, loop
        self.started = 0.0  # set when a slot's thread takes it
        self.released = False


def _resolve(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Lanes:
    def __init__(self, pool: ThreadPoolExecutor, *, running: int, slow_after: float):
        self._pool = pool
        self._limit = max(1, running)
        self._slow_after = slow_after
        self._lock = threading.Lock()
        self._reads: collections.deque[_Job] = collections.deque()
        self._writes: collections.deque[_Job] = collections.deque()
        self._read_next = True  # whose turn it is when both queues hold requests
        self._holding = 0  # slots held: threads taking requests from the queue
        self._running: set[_Job] = set()  # requests that hold a slot, for the slow-request watch
        self._watching = False

    def run(self, function: Callable[..., Any], *args, reads_only: bool = False) -> asyncio.Future:
        """Queue `function(*args)` (called on a pool thread as `function(*args, give_up_turn)`, in a copy of
        the caller's context) and return a future of its result; on the event loop. `reads_only` requests
        (safe methods) queue apart from the others and the two queues are taken in turns."""
        loop = asyncio.get_running_loop()
        job = _Job(function, args, contextvars.copy_context(), loop.create_future(), loop)
        with self._lock:
            (self._reads if reads_only else self._writes).append(job)
            start = self._holding < self._limit
            if start:
                self._holding += 1
            waiting = not start and not self._watching
            if waiting:
                self._watching = True
        if start:
            self._pool.submit(self._drain)
        if waiting:
            loop.call_later(self._slow_after / 2, self._watch, loop)
        return job.future

    def _drain(self) -> None:
        """A slot's thread: run queued requests until the queue is empty or a request gave the slot up."""
        while True:
            with self._lock:
                job = self._next()
                if job is None:
                    self._holding -= 1
                    return
                job.started = time.monotonic()
                self._running.add(job)
            result, error = None, None
            try:
                result = job.context.run(job.function, *job.args, lambda job=job: self._release(job))
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting request as it is
                error = exc
            with self._lock:
                self._running.discard(job)
                kept = not job.released
                job.released = True
            try:
                job.loop.call_soon_threadsafe(_resolve, job.future, result, error)
            except RuntimeError:  # the loop closed while this request ran (shutdown): nobody waits for it
                pass
            if not kept:
                return

    def _next(self) -> _Job | None:
        """The next request to run, the two queues taking turns (under the lock)."""
        if self._reads and (self._read_next or not self._writes):
            self._read_next = False
            return self._reads.popleft()
        if self._writes:
            self._read_next = True
            return self._writes.popleft()
        return None

    def _queued(self) -> bool:
        return bool(self._reads or self._writes)

    def _release(self, job: _Job) -> None:
        """The job gives its slot up while it goes on running (thread-safe; once is enough): another thread
        takes over the queue."""
        with self._lock:
            if job.released:
                return
            job.released = True
            self._running.discard(job)
            start = self._queued()
            if not start:
                self._holding -= 1
        if start:
            self._pool.submit(self._drain)

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """While requests wait, release the slots of those running for longer than slow_after (on the loop)."""
        deadline = time.monotonic() - self._slow_after
        with self._lock:
            slow = [job for job in self._running if job.started <= deadline]
        for job in slow:
            self._release(job)
        with self._lock:
            self._watching = self._queued()
        if self._watching:
            loop.call_later(self._slow_after / 2, self._watch, loop)
