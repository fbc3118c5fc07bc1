"""Runners' ORM calls (agentserver/workers/loop.py db under own_thread): each on its runner's own thread, a few at a
time, and a slow one lets the next start. A real event loop and real threads, no server."""
import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentserver.workers import loop as server_loop

LONG = 10.0  # liveness bound: a test that waits this long has found a stuck gate


class Calls:
    def __init__(self):
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.threads: dict[str, set[int]] = {}

    def call(self, name: str, hold: threading.Event | None = None) -> str:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.threads.setdefault(name, set()).add(threading.get_ident())
        (hold or threading.Event()).wait(LONG if hold is not None else 0.005)
        with self.lock:
            self.now -= 1
        return name


async def _runner(calls: Calls, name: str, times: int, hold: threading.Event | None = None) -> list[str]:
    with ThreadPoolExecutor(max_workers=1) as executor:
        async with server_loop.own_thread(executor):
            return [await server_loop.db(calls.call)(name, hold) for _ in range(times)]


def test_runner_calls_run_on_their_own_thread_a_few_at_a_time(monkeypatch):
    monkeypatch.setattr(server_loop, "SLOW_CALL_SECONDS", LONG)  # no call is slow here: only the gate counts
    calls = Calls()

    async def main():
        return await asyncio.wait_for(asyncio.gather(*(_runner(calls, f"r{i}", 5) for i in range(8))), LONG)

    results = asyncio.run(main())
    assert results == [[f"r{i}"] * 5 for i in range(8)]
    assert 1 <= calls.most <= server_loop.RUNNER_CALLS_AT_ONCE
    assert all(len(threads) == 1 for threads in calls.threads.values())  # one runner, one thread


def test_a_slow_call_lets_the_next_runner_in():
    calls, hold = Calls(), threading.Event()

    async def main():
        slow = [asyncio.create_task(_runner(calls, f"slow{i}", 1, hold))
                for i in range(server_loop.RUNNER_CALLS_AT_ONCE)]
        while calls.now < server_loop.RUNNER_CALLS_AT_ONCE:  # both slow calls hold their thread
            await asyncio.sleep(0.01)
        try:
            return await asyncio.wait_for(_runner(calls, "quick", 3), LONG)
        finally:
            hold.set()
            await asyncio.gather(*slow)

    assert asyncio.run(main()) == ["quick"] * 3


def test_a_task_that_outlives_its_runner_cannot_use_the_runners_thread():
    calls = Calls()

    async def main():
        go_on = asyncio.Event()

        async def late_call():
            await go_on.wait()
            return await server_loop.db(calls.call)("late")

        with ThreadPoolExecutor(max_workers=1) as executor:
            async with server_loop.own_thread(executor):
                task = asyncio.get_running_loop().create_task(late_call())  # inherits the runner's context
        go_on.set()
        with pytest.raises(RuntimeError):
            await task

    asyncio.run(main())
