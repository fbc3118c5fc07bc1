"""The three SSE streams: /global/event (all of the caller's events), /event (one directory) and /api/event
(v2 envelope, one runtime context). Served by plain async Django views (DRF has no async views) that hand
`open_stream` the way to authenticate a request (server/api/events.py): the streaming itself knows no users,
tokens or projects. Each stream is held under the credential that opened it (agentserver.events.connections) and
closes when that credential ends.

Framing is opencode's: `data: <one-line JSON>\\n\\n`, no `event:` lines, server.connected first and
server.heartbeat every SSE_HEARTBEAT_SECONDS; logged events also carry `id: <log id>` for Last-Event-ID.
A stream never holds a DB connection: the queries before streaming close theirs."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection
from django.http import JsonResponse, StreamingHttpResponse

from agentserver.context import RuntimeContext
from agentserver.errors import ApiError, TooManyRequests, error_response
from agentserver.events import bus, connections
from agentserver.events.bus import BUS, GLOBAL, V2, Subscriber, server_event
from agentserver.models import EventLog
from agentserver.numerals import decimal
from agentserver.workers import loop as server_loop
from agentserver.workers import shutdown

log = logging.getLogger(__name__)
REPLAY_LIMIT = 5000
WRITE_INTERVAL = 0.01  # seconds between two writes to one stream

# `authenticate(request, shape)` → (the request's API token, its runtime context or None for the global
# stream); raises an ApiError (Unauthorized, Forbidden, ...) to refuse. Runs in a thread.
Authenticate = Callable[..., tuple[object, RuntimeContext | None]]


def _authenticated(authenticate: Authenticate, request, shape: str):
    """Releases the request thread's DB connection: a stream never holds one."""
    try:
        return authenticate(request, shape)
    finally:
        connection.close()


def _last_event_id(request) -> str | None:
    value = request.headers.get("Last-Event-ID") or request.GET.get("lastEventId")
    return value.strip() if value and value.strip() else None


def _replay(subscriber: Subscriber, last_event_id: str) -> tuple[list[bus.Event], bool]:
    """(logged events after last_event_id for this subscriber, whether the client must resync instead).
    Unknown ids and ids older than the retained log mean a gap we cannot fill."""
    try:
        logs = EventLog.objects
        after = decimal(last_event_id)
        if after is None:
            after = logs.filter(event_id=last_event_id, owner_id=subscriber.owner_id) \
                .values_list("id", flat=True).first()
            if after is None:
                return [], True
        bounds = logs.order_by("id").values_list("id", flat=True)
        oldest, newest = bounds.first(), bounds.last()
        if oldest is None or after > newest or after + 1 < oldest:
            return [], True
        rows = logs.filter(owner_id=subscriber.owner_id, id__gt=after).order_by("id")
        if subscriber.shape != GLOBAL:
            rows = rows.filter(directory=subscriber.directory)
            if subscriber.shape == V2 and subscriber.workspace_id:
                rows = rows.filter(workspace_id=subscriber.workspace_id)
        rows = list(rows[:REPLAY_LIMIT + 1])
        if len(rows) > REPLAY_LIMIT:
            return [], True
        if subscriber.session_id is not None:
            rows = [r for r in rows if bus.event_session_id(r.type, r.properties) == subscriber.session_id]
        return [bus.Event.from_log(row) for row in rows], False
    finally:
        connection.close()


def method_not_allowed(request) -> JsonResponse:
    """A stream is read with GET only."""
    response = JsonResponse({"name": "MethodNotAllowedError",
                             "data": {"message": f'Method "{request.method}" not allowed.'}}, status=405)
    response["Allow"] = "GET"
    return response


async def open_stream(request, shape: str, *, authenticate: Authenticate, session_id: str | None = None,
                      after: str | None = None):
    """The response of one event stream of `shape` (GLOBAL, INSTANCE or V2); `session_id`: only that session's
    events (authenticate checks it is the caller's); `after`: replay from there when no Last-Event-ID is sent."""
    loop = server_loop.capture_running()
    if request.method != "GET":
        return method_not_allowed(request)
    try:
        token, context = await sync_to_async(_authenticated)(authenticate, request, shape)
    except ApiError as error:
        return error_response(error)
    owner_id = token.user_id
    if BUS.count(owner_id) >= settings.SSE_MAX_STREAMS_PER_USER:
        return error_response(TooManyRequests(
            f"Too many open event streams (limit {settings.SSE_MAX_STREAMS_PER_USER})"))

    subscriber = Subscriber(owner_id=owner_id, token_id=token.pk, shape=shape,
                            directory=context.directory if context else None,
                            workspace_id=context.workspace_id if context else None, session_id=session_id)
    BUS.add(subscriber)
    if token.pk is not None:
        connections.hold(token.pk, subscriber)
    if shutdown.stopping():
        subscriber.close("stopping")  # the client reconnects (to another worker) and replays from its last id
    try:
        relay = bus.bridge()
        if relay is not None:
            await relay.ensure_listening()
        head = [server_event("server.connected", subscriber).frame(shape)]
        last_event_id = _last_event_id(request) or after
        if last_event_id:
            replayed, resync = await sync_to_async(_replay)(subscriber, last_event_id)
            if resync:
                head.append(server_event("server.resync", subscriber).frame(shape))
            for event in replayed:
                head.append(event.frame(shape))
            if replayed:
                subscriber.replayed_up_to = replayed[-1].log_id
        subscriber.start_heartbeat(loop, settings.SSE_HEARTBEAT_SECONDS)
    except BaseException:
        _forget(subscriber)
        raise

    response = StreamingHttpResponse(_frames(subscriber, b"".join(head)), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache, no-transform"
    response["X-Accel-Buffering"] = "no"
    response["X-Content-Type-Options"] = "nosniff"
    return response


async def _frames(subscriber: Subscriber, head: bytes):
    loop = asyncio.get_running_loop()
    try:
        yield head
        written = float("-inf")
        while True:
            await subscriber.wake.wait()
            # At most one write per WRITE_INTERVAL: each costs tens of µs (60-80 µs measured under daphne), so
            # 100 streams woken by every one of 1,000 events/s would need more than a core; a burst goes out as
            # one chunk instead.
            # An event after a quiet spell is written at once.
            wait = written + WRITE_INTERVAL - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            subscriber.wake.clear()
            chunk = subscriber.take()
            if chunk:
                written = loop.time()
                yield chunk
            subscriber.written()
            if subscriber.closing:
                return
    finally:
        # Also on client disconnect: Django cancels the streaming task and this runs.
        subscriber.stop_heartbeat()
        _forget(subscriber)


def _forget(subscriber: Subscriber) -> None:
    BUS.remove(subscriber)
    if subscriber.token_id is not None:
        connections.release(subscriber.token_id, subscriber)


# A stopping worker ends its streams at once: the ASGI server would otherwise wait for them forever, and their
# clients reconnect to a worker that stays, replaying from their Last-Event-ID.
shutdown.on_stop(lambda: BUS.close_all("stopping"))
