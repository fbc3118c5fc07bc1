"""The in-process event bus: subscribers (one per open SSE stream) with bounded buffers, fan-out on the
server's event loop, and the Redis pub/sub bridge that carries events between workers.

Everything in `Bus` runs on the event loop thread. Other threads hand events over with `deliver_threadsafe`
(loop.call_soon_threadsafe). Frames are serialised once per event and stream shape, then shared by every
subscriber of that shape; a subscriber's backlog goes out as one body chunk (one ASGI write)."""
from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from agentserver import ids
from agentserver.clock import now_ms
from agentserver.events import connections
from agentserver.events.sequencer import Sequencer
from agentserver.workers import deployment
from agentserver.workers import liveness as workers

log = logging.getLogger(__name__)

GLOBAL, INSTANCE, V2 = "global", "instance", "v2"
DISPOSED = "server.instance.disposed"


def _dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# What authenticated a stream: an API token's pk, or a signed-in browser's "session:<key>".
CredentialId = connections.CredentialId


@dataclass(slots=True, eq=False)
class Event:
    type: str
    properties: dict
    owner_id: int | None
    directory: str | None = None
    workspace_id: str | None = None
    project_id: str | None = None
    id: str = field(default_factory=lambda: ids.ascending("evt"))
    time: int = field(default_factory=now_ms)
    log_id: int | None = None
    _frames: dict = field(default_factory=dict)

    def frame(self, shape: str) -> bytes:
        """`id: <log id>` (logged events only) + `data: <json>` in the stream's shape."""
        cached = self._frames.get(shape)
        if cached is None:
            head = f"id: {self.log_id}\n" if self.log_id is not None else ""
            cached = f"{head}data: {_dumps(self.shape(shape))}\n\n".encode()
            self._frames[shape] = cached
        return cached

    def shape(self, shape: str) -> dict:
        payload = {"id": self.id, "type": self.type, "properties": self.properties}
        if shape == INSTANCE:
            return payload
        if shape == GLOBAL:
            if self.owner_id is None:  # server.* stream bookkeeping: no directory or project
                return {"payload": payload}
            item: dict = {"directory": self.directory or "global"}
            if self.project_id:
                item["project"] = self.project_id
            if self.workspace_id:
                item["workspace"] = self.workspace_id
            item["payload"] = payload
            return item
        context: dict = {"directory": self.directory} if self.directory else {}
        if self.workspace_id:
            context["workspaceID"] = self.workspace_id
        return {"id": self.id, "type": self.type, "time": self.time, "context": context,
                "payload": self.properties}

    def to_wire(self) -> dict:
        return {"i": self.id, "l": self.log_id, "t": self.type, "p": self.properties, "o": self.owner_id,
                "d": self.directory, "w": self.workspace_id, "j": self.project_id, "m": self.time}

    @classmethod
    def from_log(cls, row) -> Event:
        """An event as the event log (agentserver.models.EventLog) keeps it: its row id is the log id."""
        return cls(type=row.type, properties=row.properties, owner_id=row.owner_id, directory=row.directory,
                   workspace_id=row.workspace_id, project_id=row.project_id, id=row.event_id, time=row.time,
                   log_id=row.id)

    @classmethod
    def from_wire(cls, data: dict) -> Event:
        return cls(type=data["t"], properties=data["p"], owner_id=data["o"], directory=data["d"],
                   workspace_id=data["w"], project_id=data["j"], id=data["i"], time=data["m"], log_id=data["l"])


def server_event(type: str, subscriber: Subscriber) -> Event:
    """server.connected / heartbeat / resync: not logged, no owner; v2 carries the stream's context."""
    return Event(type=type, properties={}, owner_id=None, directory=subscriber.directory,
                 workspace_id=subscriber.workspace_id)


def event_session_id(type: str, properties) -> str | None:
    """The session an event is about: `sessionID`, or that of its `info` or `part`; a session.* event's
    `info` is the session itself."""
    if not isinstance(properties, dict):
        return None
    if isinstance(properties.get("sessionID"), str):
        return properties["sessionID"]
    for key in ("info", "part"):
        inner = properties.get(key)
        if isinstance(inner, dict):
            if isinstance(inner.get("sessionID"), str):
                return inner["sessionID"]
            if key == "info" and type.startswith("session.") and isinstance(inner.get("id"), str):
                return inner["id"]
    return None


def _resolve(futures: list[asyncio.Future]) -> None:
    for future in futures:
        if not future.done():
            future.set_result(None)


class Subscriber:
    """One open stream: what it wants, a bounded backlog, and why it must close (if it must)."""

    def __init__(self, *, owner_id: int, token_id: CredentialId | None, shape: str, directory: str | None = None,
                 workspace_id: str | None = None, maxsize: int | None = None, session_id: str | None = None):
        self.owner_id = owner_id
        self.session_id = session_id  # a stream of one session's events (v2 session.events)
        self.token_id = token_id
        self.shape = shape
        self.directory = directory
        self.workspace_id = workspace_id
        self.maxsize = maxsize or settings.SSE_QUEUE_SIZE
        self.backlog: deque[Event] = deque()
        self.wake = asyncio.Event()
        self.dropped = 0
        self.overflowed = False
        self.heartbeat_due = False
        self.closing: str | None = None
        self.replayed_up_to = 0  # live events with a log id at or below this were already replayed
        self._timer: asyncio.TimerHandle | None = None
        self._waiting: list[asyncio.Future] = []   # for the next take's frames to be written
        self._writing: list[asyncio.Future] = []   # for the frames being written now

    def wants(self, event: Event) -> bool:
        if self.shape == GLOBAL:
            return True
        if event.directory != self.directory:
            return False
        if self.session_id is not None and event.owner_id is not None \
                and event_session_id(event.type, event.properties) != self.session_id:
            return False
        return not (self.shape == V2 and self.workspace_id and event.workspace_id != self.workspace_id)

    def offer(self, event: Event) -> None:
        if self.closing or not self.wants(event):
            return
        if len(self.backlog) >= self.maxsize:
            self.dropped += 1
            self.overflowed = True
        else:
            self.backlog.append(event)
        self.wake.set()

    def close(self, reason: str) -> None:
        self.closing = self.closing or reason
        self.wake.set()

    def take(self) -> bytes:
        """Everything pending as one chunk. Overflow ends with server.resync and closes the stream: the
        client reconnects with Last-Event-ID and the log fills the gap, rather than silently missing events."""
        frames = []
        self._writing, self._waiting = self._writing + self._waiting, []
        while self.backlog:
            event = self.backlog.popleft()
            if event.log_id is not None and event.log_id <= self.replayed_up_to:
                continue
            frames.append(event.frame(self.shape))
            if self.shape == INSTANCE and event.type == DISPOSED:
                self.backlog.clear()
                self.closing = "disposed"
                break
        if self.overflowed and not self.closing:
            frames.append(server_event("server.resync", self).frame(self.shape))
            self.closing = "overflow"
        if self.heartbeat_due and not self.closing:
            frames.append(server_event("server.heartbeat", self).frame(self.shape))
        self.heartbeat_due = False
        return b"".join(frames)

    def holds(self, session_id: str) -> bool:
        """Whether an event about this session waits in the backlog."""
        return any(event_session_id(event.type, event.properties) == session_id for event in self.backlog)

    def when_written(self) -> asyncio.Future:
        """Done once what the backlog holds now has been written (or the stream ended)."""
        future = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        self.wake.set()
        return future

    def written(self) -> None:
        """The frames of the last take went out (sse._frames, after the write)."""
        waiters, self._writing = self._writing, []
        _resolve(waiters)

    def ended(self) -> None:
        waiters, self._writing, self._waiting = self._writing + self._waiting, [], []
        _resolve(waiters)

    def start_heartbeat(self, loop: asyncio.AbstractEventLoop, interval: float) -> None:
        def tick():
            self.heartbeat_due = True
            self.wake.set()
            self._timer = loop.call_later(interval, tick)

        self._timer = loop.call_later(interval, tick)

    def stop_heartbeat(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class Bus:
    """Subscribers by owner, and in-process listeners by event type. Loop thread only (`listen` at start-up)."""

    def __init__(self):
        self.by_owner: dict[int, set[Subscriber]] = {}
        self.listeners: dict[str, tuple[Callable[[Event], None], ...]] = {}
        self.sequencer: Sequencer | None = None  # once other workers' events come through Redis

    def deliver(self, events: list[Event]) -> None:
        """Logged events from this worker's outbox or from Redis: in log-id order once the bridge listens."""
        if self.sequencer is None:
            self.dispatch(events)
        else:
            self.sequencer.offer(events)

    def sequence_from(self, next_log_id: int) -> None:
        """The Redis subscription is confirmed and `next_log_id` is the first id not yet committed."""
        if self.sequencer is None:
            self.sequencer = Sequencer(self.dispatch, fetch=logged_between,
                                       wait_seconds=settings.EVENT_GAP_WAIT_MS / 1000)
        self.sequencer.start_at(next_log_id)

    def listen(self, types: tuple[str, ...], callback: Callable[[Event], None]) -> None:
        """Call `callback(event)` on the loop for every event of these types this worker sees: its own and,
        through the Redis bridge, every other worker's. It must be quick and must not block (it runs inside
        the fan-out); an app registers it once, in its `AppConfig.ready()`."""
        for type in types:
            if callback not in self.listeners.get(type, ()):
                self.listeners[type] = (*self.listeners.get(type, ()), callback)

    def add(self, subscriber: Subscriber) -> None:
        self.by_owner.setdefault(subscriber.owner_id, set()).add(subscriber)

    def remove(self, subscriber: Subscriber) -> None:
        subscriber.ended()
        subs = self.by_owner.get(subscriber.owner_id)
        if subs is not None:
            subs.discard(subscriber)
            if not subs:
                del self.by_owner[subscriber.owner_id]

    async def written(self, session_id: str, timeout: float) -> None:
        """Until every stream here has written the events about this session it holds (at most `timeout`).
        A synchronous prompt's answer goes out after them, as the reference's does: `opencode run --attach`
        prints the answer from the stream and exits when the prompt returns."""
        pending = [subscriber.when_written() for subs in self.by_owner.values() for subscriber in subs
                   if subscriber.holds(session_id)]
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    def count(self, owner_id: int | None = None) -> int:
        if owner_id is None:
            return sum(len(subs) for subs in self.by_owner.values())
        return len(self.by_owner.get(owner_id, ()))

    def dispatch(self, events: list[Event]) -> None:
        for event in events:
            for subscriber in tuple(self.by_owner.get(event.owner_id, ())):
                subscriber.offer(event)
            for callback in self.listeners.get(event.type, ()):
                try:
                    callback(event)
                except Exception:
                    log.exception("event listener failed on %s", event.type)

    def close_all(self, reason: str) -> None:
        for subs in list(self.by_owner.values()):
            for subscriber in tuple(subs):
                subscriber.close(reason)

    def resync_all(self) -> None:
        for subs in list(self.by_owner.values()):
            for subscriber in tuple(subs):
                subscriber.overflowed = True
                subscriber.wake.set()


BUS = Bus()


def logged_between(first: int, last: int) -> list[Event]:
    """The event log's events with ids first..last, in order (a gap the sequencer waited for in vain)."""
    from agentserver.models import EventLog

    return [Event.from_log(row) for row in EventLog.objects.filter(id__gte=first, id__lte=last).order_by("id")]


def next_log_id() -> int:
    from django.db.models import Max

    from agentserver.models import EventLog

    return (EventLog.objects.aggregate(top=Max("id"))["top"] or 0) + 1


# ---- Redis bridge -----------------------------------------------------------------------------------------

class RedisBridge:
    """Publishing (sync, from the outbox thread) and one listener task per process (on the loop).
    A worker skips its own messages: it delivered them locally already."""

    def __init__(self, url: str):
        self.url = url
        self._channel: str | None = None
        self._sync_client = None
        self._listener: asyncio.Task | None = None
        self._ready: asyncio.Event | None = None

    @property
    def channel(self) -> str:
        """Resolved on first use, from a thread (it may read the database)."""
        if self._channel is None:
            self._channel = deployment.redis_channel(self.url)
        return self._channel

    def publish(self, message: dict) -> None:
        import redis

        data = _dumps({"o": workers.WORKER_ID, **message})
        for attempt in (1, 2):
            try:
                if self._sync_client is None:
                    self._sync_client = redis.Redis.from_url(self.url, socket_timeout=5)
                self._sync_client.publish(self.channel, data)
                return
            except redis.RedisError:
                self._sync_client = None
                if attempt == 2:
                    log.exception("could not publish events to Redis")

    def ping(self) -> None:
        import redis

        if self._sync_client is None:
            self._sync_client = redis.Redis.from_url(self.url, socket_timeout=5)
        self._sync_client.ping()

    @property
    def listening(self) -> bool:
        return self._listener is not None and not self._listener.done() and self._ready.is_set()

    async def ensure_listening(self, timeout: float = 5.0) -> None:
        """Start the listener if needed and wait until Redis confirmed the subscription, so a stream that
        replays from the log afterwards cannot miss an event published in between."""
        if self._listener is None or self._listener.done():
            self._ready = asyncio.Event()
            self._listener = asyncio.get_running_loop().create_task(self._listen())
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            log.warning("Redis subscription not confirmed within %.1fs; continuing", timeout)

    async def _listen(self) -> None:
        import redis.asyncio as aioredis

        from agentserver.workers.loop import free_db

        failed = False
        while True:
            client = aioredis.from_url(self.url)
            pubsub = client.pubsub()
            try:
                if self._channel is None:
                    await free_db(_resolve_channel)(self)
                await pubsub.subscribe(self.channel)
                async for message in pubsub.listen():
                    if message["type"] == "subscribe":
                        BUS.sequence_from(await free_db(next_log_id)())
                        self._ready.set()
                        if failed:  # events may have been missed while disconnected
                            BUS.resync_all()
                        failed = False
                    elif message["type"] == "message":
                        self._receive(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("Redis event listener failed; reconnecting")
                failed = True
                await asyncio.sleep(1)
            finally:
                try:
                    await pubsub.aclose()
                    await client.aclose()
                except Exception:
                    pass

    def _receive(self, data: bytes) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            return
        if message.get("o") == workers.WORKER_ID:
            return
        if message.get("e"):
            BUS.deliver([Event.from_wire(item) for item in message["e"]])
        if message.get("revoke") is not None:
            connections.end(message["revoke"])


def _resolve_channel(relay: RedisBridge) -> str:
    return relay.channel


_bridge: RedisBridge | None = None


def bridge() -> RedisBridge | None:
    global _bridge
    if not settings.REDIS_URL:
        return None
    if _bridge is None or _bridge.url != settings.REDIS_URL:
        _bridge = RedisBridge(settings.REDIS_URL)
    return _bridge
