"""Identical reads asked for at once share one run, and nobody gets an answer older than their question.

A caller arriving while a run for its key is in flight does not take that run's answer (it started before
the caller asked, and may miss a change the caller just made): it waits for the next run, which starts when
the current one ends and serves everyone who arrived in between. One run per key is in flight at a time, and
a burst of N identical calls costs two runs instead of N. Used for reads that start a program (the git
status of a worktree), which cost milliseconds each and which every client polls."""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import TypeVar

from agentserver.workers.loop import let_others_run

T = TypeVar("T")


class Coalescer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[Hashable, Future] = {}
        self._next: dict[Hashable, Future] = {}

    def call(self, key: Hashable, function: Callable[[], T]) -> T:
        """function()'s answer from a run that started after this call; raises what that run raised."""
        with self._lock:
            current = self._running.get(key)
            waiting = self._next.get(key) if current is not None else None
            if current is None:
                mine = self._running[key] = Future()
            elif waiting is None:
                mine = self._next[key] = Future()
        if waiting is not None:
            let_others_run()
            return waiting.result()
        if current is not None:
            let_others_run()
            current.exception()  # wait for the run in flight to end, whatever it answered
            with self._lock:
                self._next.pop(key, None)
                self._running[key] = mine
        try:
            result = function()
        except BaseException as error:
            mine.set_exception(error)
            raise
        else:
            mine.set_result(result)
            return result
        finally:
            with self._lock:
                # With a caller waiting for the next run, that caller takes the key over; until it does,
                # newcomers must see a run in flight and join the waiting one, not start a third.
                if self._running.get(key) is mine and key not in self._next:
                    del self._running[key]
