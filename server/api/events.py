"""global.event, event.subscribe and the v2 event.subscribe: the three event streams (agentserver/sse.py),
authenticated with the API's credentials (or the signed-in browser's session, from this server's own pages)
and resolved to the caller's runtime context here, above the
plumbing that streams them."""
from django.views.decorators.csrf import csrf_exempt

from agentserver import sse
from agentserver.bus import GLOBAL, INSTANCE, V2
from agentserver.errors import Unauthorized
from auth_app.authentication import browser_session, challenge, credentials_to_token, live_stream_ids
from projects_app.contexts import resolve


def _authenticate(request, shape: str):
    """(token, runtime context or None): the HTTP routes' credentials, in the header or `auth_token=`, else
    the browser's session."""
    try:
        token = credentials_to_token(request.META.get("HTTP_AUTHORIZATION", ""),
                                     request.META.get("QUERY_STRING", "")) or browser_session(request)
    except ValueError as error:
        raise Unauthorized(str(error), challenge=challenge(request))
    if token is None:
        raise Unauthorized("Authentication credentials were not provided.", challenge=challenge(request))
    if shape == GLOBAL:
        return token, None
    return token, resolve(token.user, request.GET, request.headers, allow_workspace=shape == V2, roots=token.roots)


async def _stream(request, shape: str):
    return await sse.open_stream(request, shape, authenticate=_authenticate, live_tokens=live_stream_ids)


@csrf_exempt  # GET only; a session cookie is accepted from this server's own pages only
async def global_event_stream(request):
    return await _stream(request, GLOBAL)


@csrf_exempt  # GET only; a session cookie is accepted from this server's own pages only
async def instance_event_stream(request):
    return await _stream(request, INSTANCE)


@csrf_exempt  # GET only; a session cookie is accepted from this server's own pages only
async def v2_event_stream(request):
    return await _stream(request, V2)
