"""Wake-ups for threads that wait on a session (a sync prompt, a command, `session.wait`).

A waiting thread watches one session; the event bus wakes it when that session's assistant message completes,
when the session goes idle or when it is deleted. The bus sees this worker's events and, through the Redis
bridge, every other worker's, so a wait wakes at once wherever the runner is. The thread then reads the
database once to decide; only a worker that dies without a word leaves it to the caller's fallback timeout.

The listener runs on the event loop inside the bus's fan-out: it looks the session up and sets flags."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from agentserver.events.bus import Event

WAKING_TYPES = ("message.updated", "session.status", "session.idle", "session.deleted")

_lock = threading.Lock()
_watches: dict[str, set[Watch]] = {}


class Watch:
    """One thread's wait on one session. Woken by any wake-up since its last `wait`, so none is lost between
    reading the state and waiting again (events are published after their commit: what woke it is visible)."""

    __slots__ = ("_flag", "session_id")

    def __init__(self, session_id: str):
        self.session_id = session_id
        self._flag = threading.Event()

    def wake(self) -> None:
        self._flag.set()

    def wait(self, timeout: float) -> bool:
        """Until a wake-up (True) or the timeout (False)."""
        woken = self._flag.wait(max(timeout, 0.0))
        self._flag.clear()
        return woken


@contextlib.contextmanager
def watching(session_id: str) -> Iterator[Watch]:
    watch = Watch(session_id)
    with _lock:
        _watches.setdefault(session_id, set()).add(watch)
    try:
        yield watch
    finally:
        with _lock:
            watches = _watches.get(session_id)
            if watches is not None:
                watches.discard(watch)
                if not watches:
                    del _watches[session_id]


def wake(session_id: str) -> None:
    """Wake this worker's waits on the session (from any thread)."""
    with _lock:
        watches = tuple(_watches.get(session_id, ()))
    for watch in watches:
        watch.wake()


def on_event(event: Event) -> None:
    """The bus listener (registered in SessionsAppConfig.ready): the events after which a wait may be over."""
    if not _watches:
        return
    properties = event.properties
    if event.type == "message.updated":
        info = properties.get("info") or {}
        if info.get("role") != "assistant" or not (info.get("time") or {}).get("completed"):
            return
        session_id = info.get("sessionID")
    elif event.type == "session.status":
        if (properties.get("status") or {}).get("type") != "idle":
            return
        session_id = properties.get("sessionID")
    elif event.type == "session.deleted":
        session_id = (properties.get("info") or {}).get("id")
    else:
        session_id = properties.get("sessionID")
    if session_id:
        wake(session_id)
