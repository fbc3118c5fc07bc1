"""Logged events reach a worker's streams in log-id order, wherever they were published.

A worker sees two kinds of logged events: its own, handed to its loop by its outbox right after they are
logged, and every other worker's, relayed through Redis after theirs are. Ids are taken in commit order
across the deployment (events._write_log), but the two paths race: worker B's event 11 could reach B's
streams before worker A's event 10 arrives from Redis, and a client that reconnected right after 11
(Last-Event-ID: 11) would never be sent 10. So logged events wait here until every smaller id has been
delivered; an id that does not come within `wait_seconds` (its publisher died between the log and Redis, a
message Redis dropped, a hole in the id sequence) is read from the event log, which is the truth, and what
the log does not have is skipped. Events without a log id (token deltas, a stream's own bookkeeping) are
never held. Loop thread only; only where a Redis bridge carries other workers' events (one process's own
events already reach its loop in id order)."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


class Sequencer:
    def __init__(self, dispatch: Callable[[list], None], *, fetch: Callable[[int, int], list],
                 wait_seconds: float):
        """`dispatch(events)` delivers in order; `fetch(first, last)` (run on a thread) reads the logged events
        with ids first..last from the event log, in order."""
        self._dispatch = dispatch
        self._fetch = fetch
        self._wait_seconds = wait_seconds
        self._next: int | None = None       # the log id to deliver next; None until known
        self._waiting: dict = {}             # log id → event that came before a smaller id
        self._timer: asyncio.TimerHandle | None = None
        self._fetching = False
        self._fill_task: asyncio.Task | None = None

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def start_at(self, next_id: int) -> None:
        """The first id this worker has not seen committed (its Redis subscription was just confirmed): what
        is waiting below it was received live and goes out now, in order."""
        self._next = next_id
        early = sorted(i for i in self._waiting if i < next_id)
        self._dispatch([self._waiting.pop(i) for i in early])
        self._release()

    def offer(self, events: list) -> None:
        out = []
        for event in events:
            if event.log_id is None:
                out.append(event)
                continue
            if self._next is None:
                self._next = event.log_id
            if event.log_id < self._next:
                continue  # delivered already: read from the log when it was late
            self._waiting[event.log_id] = event
            out.extend(self._ready())
        if out:
            self._dispatch(out)
        self._arm()

    def _ready(self) -> list:
        out = []
        while self._next in self._waiting:
            out.append(self._waiting.pop(self._next))
            self._next += 1
        return out

    def _release(self) -> None:
        ready = self._ready()
        if ready:
            self._dispatch(ready)
        self._arm()

    def _arm(self) -> None:
        if not self._waiting:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return
        if self._timer is None and not self._fetching:
            self._timer = asyncio.get_running_loop().call_later(self._wait_seconds, self._gap_timed_out)

    def _gap_timed_out(self) -> None:
        self._timer = None
        if not self._waiting or self._next is None:
            return
        first, last = self._next, min(self._waiting) - 1
        self._fetching = True
        # Kept: the loop holds tasks only weakly.
        self._fill_task = asyncio.get_running_loop().create_task(self._fill(first, last))

    async def _fill(self, first: int, last: int) -> None:
        from agentserver.workers.loop import free_db

        try:
            found = await free_db(self._fetch)(first, last)
        except Exception:
            log.exception("could not read events %d..%d from the log; skipping them", first, last)
            found = []
        finally:
            self._fetching = False
        if self._next is None or self._next > last:
            self._release()  # Redis brought them meanwhile
            return
        late = [event for event in found if event.log_id >= self._next]
        self._next = last + 1
        if late:
            self._dispatch(late)
        self._release()
