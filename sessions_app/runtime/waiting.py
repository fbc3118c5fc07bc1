"""Waiting, in a view thread, for the runner: for the answer to a prompt, or for the session to go idle.

A wait reads the state when the session's events say it may have changed (runtime/wakeups.py: its assistant
message completed, it went idle, in this worker or any other); the database is read without an event only
after FALLBACK_SECONDS, for a runner whose worker died. Every wait is bounded (WAIT_SECONDS) and ends when
the session is idle without anything left to do for it, so a request never hangs: an answer that cannot
come any more ends the wait with an error."""
from __future__ import annotations

import concurrent.futures
import contextlib
import os
import time
from collections.abc import Iterator

from agentserver.errors import ApiError, NotFound
from agentserver.events import publisher as events
from agentserver.events.bus import BUS, bridge
from agentserver.workers import loop as server_loop
from sessions_app.models import Message, Part
from sessions_app.runtime import leases, parts, supervisor, wakeups
from sessions_app.runtime.compaction import continuation_of
from sessions_app.runtime.message_queue import last_answered_user_id, queued_after
from sessions_app.store.messages import latest_answer_to
from sessions_app.store.rows import latest_assistant, parts_of
from sessions_app.store.sessions import session_exists

WAIT_SECONDS = float(os.environ.get("AGENTSERVER_ANSWER_WAIT_SECONDS", "3600"))
# How long a session may look idle before a wait kicks its runner again, then gives up on the answer.
IDLE_GRACE_SECONDS = 2.0
# Events wake a wait (runtime/wakeups.py); without one for this long it reads the database anyway: a worker
# that died says nothing, and its lease expires after this long.
FALLBACK_SECONDS = max(leases.LEASE_MS / 1000, 1.0)
# The longest an answer waits for the streams to write the events before it (_streamed).
STREAMED_SECONDS = 1.0


class NoAnswer(ApiError):
    """The session went idle (or the wait ran out) without answering the message."""
    status = 409
    name = "NoAnswerError"


def _idle(session_id: str) -> bool:
    return not leases.is_live(session_id) and not supervisor.is_running_here(session_id)


def answer_state(session_id: str, user_message_id: str) -> Message | None:
    """The final assistant message answering `user_message_id`, or None while it is still coming."""
    last = latest_assistant(session_id)  # the answer, mostly: the runner answers in order
    if last is not None and (last.info or {}).get("parentID") != user_message_id:
        last = latest_answer_to(session_id, user_message_id)
    if last is None:
        return None
    info = last.info
    if not (info.get("time") or {}).get("completed"):
        return None
    if info.get("error") or info.get("finish") not in ("tool-calls", None, "unknown"):
        return last
    newest = last_answered_user_id(session_id)
    if newest > user_message_id or not leases.is_live(session_id):
        return last
    return None


def wait_for_answer(session_id: str, user_message_id: str, *, limit: float | None = None) -> tuple[Message, list[Part]]:
    deadline = time.monotonic() + (WAIT_SECONDS if limit is None else limit)
    idle_since: float | None = None
    kicked = False
    with _watching(session_id) as watch:
        while True:
            message = answer_state(session_id, user_message_id)
            if message is not None:
                # The runner may carry on in a message of its own (compaction, "continue"): follow it.
                follow = continuation_of(session_id, user_message_id)
                if follow is not None:
                    user_message_id, idle_since, kicked = follow, None, False
                    continue
                _settle(watch, user_message_id, 5.0 if message.info.get("error") == parts.ABORTED else 1.0)
                _streamed(session_id)
                return message, parts_of(message.id)
            now = time.monotonic()
            if now > deadline:
                raise NoAnswer(f"No answer to message {user_message_id} in time", messageID=user_message_id)
            timeout = FALLBACK_SECONDS
            if not _idle(session_id):
                idle_since, kicked = None, False
            elif idle_since is None:
                idle_since, timeout = now, IDLE_GRACE_SECONDS
            elif now - idle_since > IDLE_GRACE_SECONDS:
                if not session_exists(session_id):
                    raise NotFound(f"Session not found: {session_id}", sessionID=session_id)
                if kicked:
                    raise NoAnswer(f"The session went idle without answering message {user_message_id}",
                                   messageID=user_message_id)
                supervisor.kick(session_id)  # nobody is on it (a lost wake-up): kick it once more
                idle_since, kicked, timeout = now, True, IDLE_GRACE_SECONDS
            else:
                timeout = idle_since + IDLE_GRACE_SECONDS - now
            _sleep(watch, min(timeout, deadline - now))


def _settle(watch: wakeups.Watch, answered_user_id: str, limit: float) -> None:
    """The reference answers a prompt once its loop has ended and the session is idle, so a client's next
    call (a revert, an edit: 409 on a busy session) never races the turn's last writes: give the runner a
    moment to let go of the session after the answer (longer after an abort, whose clean-up takes longer).
    Bounded, and not at all when another prompt is queued: that one keeps it busy."""
    session_id = watch.session_id
    deadline = time.monotonic() + limit
    while (leases.is_live(session_id) and time.monotonic() < deadline
           and not queued_after(session_id, answered_user_id)):
        _sleep(watch, deadline - time.monotonic())


def _streamed(session_id: str) -> None:
    """The reference publishes a turn's events, its idle status last, before the prompt's answer, and writes
    them to the open streams as they are published: `opencode run --attach` prints the parts it read from
    /event and exits as soon as the answer comes. Here a stream writes what the bus handed it a few
    milliseconds later (sse.WRITE_INTERVAL); the answer waits for this worker's streams to write the
    session's events published so far (bounded: a client that stops reading its stream holds up nothing)."""
    events.flush(STREAMED_SECONDS)
    written = server_loop.start(BUS.written(session_id, STREAMED_SECONDS))
    if written is not None:  # None: no server loop in this process, and so no streams
        server_loop.let_others_run()
        with contextlib.suppress(concurrent.futures.TimeoutError):
            written.result(STREAMED_SECONDS + 1)


def wait_idle(session_id: str, *, limit: float | None = None) -> None:
    """Until the session is idle, or the wait runs out (the caller then reads the state as it is)."""
    deadline = time.monotonic() + (WAIT_SECONDS if limit is None else limit)
    with _watching(session_id) as watch:
        while not _idle(session_id) and time.monotonic() < deadline:
            _sleep(watch, min(FALLBACK_SECONDS, deadline - time.monotonic()))


def _sleep(watch: wakeups.Watch, timeout: float) -> None:
    """Until the session's next event (or the timeout), without holding a database connection: on
    PostgreSQL a pool of a few connections would otherwise be held by waiting requests, and the runners
    they wait for could not get one."""
    server_loop.give_back_connections()
    watch.wait(timeout)


@contextlib.contextmanager
def _watching(session_id: str) -> Iterator[wakeups.Watch]:
    """Watch the session's events; this request thread then blocks outside Python (its turn passes on)."""
    relay = bridge()
    if relay is not None and not relay.listening:
        server_loop.call(relay.ensure_listening)  # before reading the state: no event may slip in between
    with wakeups.watching(session_id) as watch:
        server_loop.let_others_run()
        yield watch
