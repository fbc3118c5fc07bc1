"""global.event, event.subscribe, the v2 event.subscribe and the v2 session.events (one session's events): the
event streams (agentserver/events/sse.py),
authenticated with the API's credentials (or the signed-in browser's session, from this server's own pages)
and resolved to the caller's runtime context here, above the
plumbing that streams them."""
import re

from asgiref.sync import sync_to_async
from django.views.decorators.csrf import csrf_exempt

from agentserver.errors import ApiError, BadRequest, Unauthorized, error_response
from agentserver.events import sse
from agentserver.events.bus import GLOBAL, INSTANCE, V2
from agentserver.http.api import id_param
from agentserver.http.mounting import stream_view
from auth_app.authentication import (
    browser_session,
    challenge,
    credentials_to_token,
)
from projects_app.contexts import resolve
from sessions_app.selectors import session_get, session_replay_after


def _token(request):
    try:
        token = credentials_to_token(request.META.get("HTTP_AUTHORIZATION", ""),
                                     request.META.get("QUERY_STRING", "")) or browser_session(request)
    except ValueError as error:
        raise Unauthorized(str(error), challenge=challenge(request))
    if token is None:
        raise Unauthorized("Authentication credentials were not provided.", challenge=challenge(request))
    return token


def _authenticate(request, shape: str):
    """(token, runtime context or None): the HTTP routes' credentials, in the header or `auth_token=`, else
    the browser's session."""
    token = _token(request)
    if shape == GLOBAL:
        return token, None
    return token, resolve(token.user, request.GET, request.headers, allow_workspace=shape == V2, roots=token.roots)


async def _stream(request, shape: str):
    return await sse.open_stream(request, shape, authenticate=_authenticate)


@stream_view("global.event", original="global/event")
@csrf_exempt  # GET only; a session cookie is accepted from this server's own pages only
async def global_event_stream(request):
    return await _stream(request, GLOBAL)


@stream_view("event.subscribe", original="event")
@csrf_exempt  # GET only; a session cookie is accepted from this server's own pages only
async def instance_event_stream(request):
    return await _stream(request, INSTANCE)


@stream_view("event.subscribe", v2="event")
@csrf_exempt  # GET only; a session cookie is accepted from this server's own pages only
async def v2_event_stream(request):
    return await _stream(request, V2)


def _session_stream_start(request, session_id: str, after: str | None):
    """(token, runtime context, the log id to replay after) of one session's stream: 404 for a session that
    is not the caller's. `after` earlier than the log keeps is no gap when none of the session's events fell
    out of it: replay starts just before the session's first retained event after `after`."""
    from django.db import connection

    try:
        token = _token(request)
        session = session_get(user=token.user, session_id=id_param(session_id, "ses", "session"))
        query = {"directory": session.directory, **({"workspace": session.workspace_id} if session.workspace_id
                                                    else {})}
        context = resolve(token.user, query, {}, allow_workspace=True, roots=token.roots)
        if after is not None:
            after = str(session_replay_after(session=session, after=int(after)))
        return token, context, after
    finally:
        connection.close()


AFTER_PATTERN = r"^[0-9]{1,18}$"  # a sequence number of session.history (a 64-bit log id)


@stream_view("session.events", v2="session/<str:sessionID>/event")
@csrf_exempt  # GET only; a session cookie is accepted from this server's own pages only
async def session_event_stream(request, sessionID: str):
    """One session's events in the v2 envelope, those logged after `after` (a sequence number of
    session.history) first."""
    if request.method != "GET":
        return sse.method_not_allowed(request)
    after = request.GET.get("after")
    if after is not None and not re.match(AFTER_PATTERN, after):
        return error_response(BadRequest(f"after: Expected a sequence number, got {after!r}", kind="Query"))
    try:
        token, context, after = await sync_to_async(_session_stream_start)(request, sessionID, after)
    except ApiError as error:
        return error_response(error)
    return await sse.open_stream(request, V2, authenticate=lambda request, shape: (token, context),
                                 session_id=sessionID, after=after)


# What /doc states of this stream's query (agentserver.http.schema reads it for routes that are not DRF views).
session_event_stream.openapi_parameters = [
    {"in": "query", "name": "after", "required": False, "schema": {"type": "string", "pattern": AFTER_PATTERN}}]
