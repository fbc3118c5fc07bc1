"""Runners' ORM threads are kept for the next runner (runtime/runner.py RunnerThreads): no thread is started
on the event loop for a runner once a runner before it ended."""
import threading

from sessions_app.runtime.runner import RunnerThreads


def test_a_runner_gets_the_thread_an_ended_runner_gave_back():
    threads = RunnerThreads(keep=1)
    first = threads.take()
    thread_of_first = first.submit(threading.get_ident).result(5)
    threads.give_back(first)
    second = threads.take()
    assert second is first
    assert second.submit(threading.get_ident).result(5) == thread_of_first
    other = threads.take()  # none kept now: a runner beside it gets an executor of its own
    assert other is not second
    assert other.submit(threading.get_ident).result(5) != thread_of_first
    threads.give_back(second)
    threads.give_back(other)  # beyond `keep`: shut down
    assert other._shutdown
    assert threads.take() is second
    second.shutdown(wait=True)
