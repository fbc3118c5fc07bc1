"""agentserver.coalesce: calls that overlap share runs, never an answer from a run that began before them."""
import threading
import time

import pytest

from agentserver.coalesce import Coalescer


def test_overlapping_calls_share_runs_that_began_after_them():
    coalescer, lock = Coalescer(), threading.Lock()
    runs, in_flight, most_in_flight = [], [0], [0]

    def read():
        with lock:
            in_flight[0] += 1
            most_in_flight[0] = max(most_in_flight[0], in_flight[0])
            started = time.monotonic()
            runs.append(started)
        time.sleep(0.02)
        with lock:
            in_flight[0] -= 1
        return started

    answers = []

    def call():
        asked = time.monotonic()
        answers.append((asked, coalescer.call("worktree", read)))

    threads = [threading.Thread(target=call) for _ in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 24
    assert all(run_started >= asked for asked, run_started in answers)
    assert most_in_flight[0] == 1
    assert len(runs) <= 24


def test_keys_do_not_share_and_a_failure_reaches_everyone_who_waited_for_it():
    coalescer = Coalescer()
    assert coalescer.call(("alice", "/w"), lambda: "a") == "a"
    assert coalescer.call(("bob", "/w"), lambda: "b") == "b"
    gate, results = threading.Event(), []

    def slow_then_fail():
        gate.wait(5)
        raise RuntimeError("git failed")

    def call():
        try:
            coalescer.call("k", slow_then_fail)
        except RuntimeError as error:
            results.append(str(error))

    threads = [threading.Thread(target=call) for _ in range(5)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join()
    assert results == ["git failed"] * 5
    with pytest.raises(RuntimeError):
        coalescer.call("k", slow_then_fail)
    assert coalescer.call("k", lambda: "fine") == "fine"


def test_callers_arriving_during_a_run_share_the_next_one():
    coalescer, started, gate = Coalescer(), threading.Event(), threading.Event()
    runs = []

    def read():
        runs.append(len(runs))
        started.set()
        gate.wait(10)
        return len(runs)

    first = threading.Thread(target=coalescer.call, args=("k", read))
    first.start()
    assert started.wait(10)
    answers = []
    waiting = [threading.Thread(target=lambda: answers.append(coalescer.call("k", read))) for _ in range(10)]
    for thread in waiting:
        thread.start()
    time.sleep(0.3)  # let all ten reach the coalescer while the first run is held
    gate.set()
    first.join()
    for thread in waiting:
        thread.join()
    assert len(runs) == 2
    assert answers == [2] * 10
