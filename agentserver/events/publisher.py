"""The one way an event leaves a service.

publish(type, properties, owner_id=…, directory=…) fires after the surrounding transaction commits (at once
when there is none, or when called on the event loop). Every event goes through one outbox per process,
which keeps publish order: one thread at a time (the publisher itself, or the outbox thread) writes the
durable log rows (a row's id is the SSE `id:` and the Last-Event-ID for replay), relays the batch to the
other workers through Redis, then hands it to this worker's bus on the event loop. publish_delta() is the
fast path for token deltas: never logged, and dispatched straight from the loop when nothing published
earlier is still on its way."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import queue
import threading

from django.conf import settings
from django.db import connection, transaction

from agentserver.db import sql
from agentserver.events import bus, connections
from agentserver.events.bus import Event
from agentserver.workers import loop as server_loop
from agentserver.workers import shutdown

log = logging.getLogger(__name__)

DELTA = "message.part.delta"
EVENT_LOG_LOCK = 0x6576656E746C6F67  # "eventlog": the advisory lock writers of the event log take in turn
_BATCH = 500


class _Outbox:
    """Publish order, kept by one processor at a time: whoever holds `_turn` drains the queue in order, logs
    the batch, relays it and hands it to the loop.

    A thread that publishes (after its commit) takes the turn itself when it is free and processes the
    queue on the spot; only when another thread holds it, or the publisher is the event loop (which must not
    touch the database), does it wake the outbox thread to do it. Handing every batch to the outbox thread
    cost more than the work: the two threads (and the loop) passed the GIL back and forth, and a POST
    /session spent a third of its time on its two events."""

    def __init__(self):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._turn = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._inflight = 0  # events queued for local delivery and not yet dispatched on the loop
        self._since_trim = 0

    @property
    def idle(self) -> bool:
        return self._inflight == 0

    def put_event(self, event: Event, *, logged: bool, local: bool = True) -> None:
        if local:
            with self._lock:
                self._inflight += 1
        self._put(("event", event, logged, local))

    def put_control(self, message: dict) -> None:
        self._put(("control", message))

    def warm_up(self, timeout: float = 10.0) -> bool:
        """Open the outbox's database and Redis connections now rather than on the first event."""
        done = threading.Event()
        self._put(("warm", done), here=False)
        return done.wait(timeout)

    def flush(self, timeout: float = 10.0) -> bool:
        done = threading.Event()
        self._put(("flush", done))
        return done.wait(timeout)

    def _put(self, item: tuple, *, here: bool = True) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="event-outbox", daemon=True)
                    self._thread.start()
                    shutdown.on_exit(lambda: self.flush(5.0))
        self._queue.put(item)
        if here and item[0] == "event" and getattr(_together, "depth", 0):
            _together.queued = True
            return
        self.kick(here=here)

    def kick(self, *, here: bool = True) -> None:
        """Process what is queued: on this thread when the turn is free, else on the outbox thread."""
        if here and _running_loop() is None and self._turn.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self._turn.release()
            if self._queue.empty():
                return
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._turn:
                self._drain()

    def _drain(self) -> None:
        while True:
            batch = []
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if not batch:
                return
            try:
                self._process(batch)
            except Exception:
                log.exception("event outbox failed on a batch")

    def _process(self, batch: list[tuple]) -> None:
        events = [item for item in batch if item[0] == "event"]
        valid = []
        for item in events:
            try:
                json.dumps(item[1].properties)
                valid.append(item)
            except (TypeError, ValueError):
                log.error("dropping event %s: properties are not JSON", item[1].type)
                if item[3]:
                    self._done(1)
        self._write_log([item[1] for item in valid if item[2]])
        relay = bus.bridge()
        if relay is not None:
            if valid:
                relay.publish({"e": [item[1].to_wire() for item in valid]})
            for item in batch:
                if item[0] == "control":
                    relay.publish(item[1])
        local = [item[1] for item in valid if item[3]]
        if local and not server_loop.call_soon(self._deliver, local):
            self._done(len(local))
        for item in batch:
            if item[0] == "warm":
                self._warm_up()
            if item[0] in ("flush", "warm"):
                item[1].set()

    def _warm_up(self) -> None:
        try:
            connection.ensure_connection()
            relay = bus.bridge()
            if relay is not None:
                relay.ping()
        except Exception:
            log.exception("could not warm up the event outbox")

    def _deliver(self, events: list[Event]) -> None:
        try:
            bus.BUS.deliver(events)
        finally:
            self._done(len(events))

    def _done(self, count: int) -> None:
        with self._lock:
            self._inflight -= count

    def _write_log(self, events: list[Event]) -> None:
        if not events:
            return
        from agentserver.models import EventLog

        rows = [EventLog(owner_id=e.owner_id, type=e.type, directory=e.directory, project_id=e.project_id,
                         workspace_id=e.workspace_id, event_id=e.id, properties=e.properties, time=e.time)
                for e in events]
        try:
            if connection.vendor == "postgresql":
                with transaction.atomic():
                    # The log only serves replay; the records themselves were committed durably by their
                    # services. Not waiting for the WAL flush takes ~12 ms off every event on slow disks;
                    # a database crash can lose the last fraction of a second of replay, nothing else.
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL synchronous_commit TO OFF")
                        # Ids come from a sequence when the rows are inserted, but become visible when their
                        # transaction commits: two workers could commit 11 before 10, and a stream that
                        # replayed up to 11 (Last-Event-ID) would never see 10. Under this lock, held to the
                        # commit, the deployment's writers take ids in commit order: the log has no holes.
                        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [EVENT_LOG_LOCK])
                    sql.insert(EventLog, rows, generated_pk=True)
            elif len(rows) <= sql.ROWS_PER_STATEMENT:
                sql.insert(EventLog, rows, generated_pk=True)  # one statement: a transaction of its own
            else:
                with transaction.atomic():
                    sql.insert(EventLog, rows, generated_pk=True)
        except Exception:
            # The events still go out live, without an id: a reconnecting client cannot replay them.
            log.exception("could not write %d events to the event log", len(rows))
            connection.close()
            return
        for event, row in zip(events, rows):
            event.log_id = row.pk
        self._since_trim += len(rows)
        trim_every = max(1, min(1000, settings.EVENT_LOG_RETENTION // 10))
        if self._since_trim >= trim_every and rows[-1].pk:
            self._since_trim = 0
            self._trim(rows[-1].pk)

    def _trim(self, last_id: int) -> None:
        from agentserver.models import EventLog

        cutoff = last_id - settings.EVENT_LOG_RETENTION
        if cutoff > 0:
            try:
                EventLog.objects.filter(id__lte=cutoff).delete()
            except Exception:
                log.exception("could not trim the event log")


OUTBOX = _Outbox()


_together = threading.local()


@contextlib.contextmanager
def together():
    """Events this thread publishes inside (after their commits) are logged as one batch when the block
    ends, one INSERT and one commit for all of them rather than one each: a service that publishes several
    events at once (session.create: session.created and session.updated) wraps them in this."""
    depth = getattr(_together, "depth", 0)
    _together.depth = depth + 1
    try:
        yield
    finally:
        _together.depth = depth
        if depth == 0 and getattr(_together, "queued", False):
            _together.queued = False
            OUTBOX.kick()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def publish(type: str, properties: dict, *, owner_id: int, directory: str | None = None,
            workspace_id: str | None = None, project_id: str | None = None) -> None:
    def emit():
        event = Event(type=type, properties=properties, owner_id=owner_id, directory=directory,
                      workspace_id=workspace_id, project_id=project_id)
        OUTBOX.put_event(event, logged=type != DELTA)

    if _running_loop() is not None:
        # Async code has no ORM transaction here (and transaction.on_commit would touch the connection).
        server_loop.capture_running()
        emit()
    else:
        transaction.on_commit(emit)


def publish_context(type: str, properties: dict, context) -> None:
    publish(type, properties, owner_id=context.user.pk, directory=context.directory,
            workspace_id=context.workspace_id, project_id=context.project_id)


async def publish_delta(type: str, properties: dict, *, owner_id: int, directory: str | None = None,
                        workspace_id: str | None = None, project_id: str | None = None) -> None:
    publish_delta_now(type, properties, owner_id=owner_id, directory=directory, workspace_id=workspace_id,
                      project_id=project_id)


def publish_delta_now(type: str, properties: dict, *, owner_id: int, directory: str | None = None,
                      workspace_id: str | None = None, project_id: str | None = None) -> None:
    """publish_delta for plain callbacks on the event loop (loop.call_at): same order guarantees."""
    server_loop.capture_running()
    event = Event(type=type, properties=properties, owner_id=owner_id, directory=directory,
                  workspace_id=workspace_id, project_id=project_id)
    if OUTBOX.idle:
        bus.BUS.dispatch([event])
        if bus.bridge() is not None:
            OUTBOX.put_event(event, logged=False, local=False)
    else:
        OUTBOX.put_event(event, logged=False)  # behind earlier events, so the part exists before its delta


def revoke_token(token_id: connections.CredentialId) -> None:
    """End the live connections (event streams, terminal sockets) opened with this credential (an API token's
    id, a browser's "session:<key>", "user:<id>"), on every worker."""
    server_loop.call_soon(connections.end, token_id)
    if bus.bridge() is not None:
        OUTBOX.put_control({"revoke": token_id})


def warm_up(timeout: float = 10.0) -> bool:
    return OUTBOX.warm_up(timeout)


def flush(timeout: float = 10.0) -> bool:
    """Wait until everything published so far is logged and relayed (management commands before exit)."""
    return OUTBOX.flush(timeout)
