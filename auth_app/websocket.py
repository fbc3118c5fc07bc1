"""WebSocket gatekeeping: the same credentials as HTTP, Origin checked against the CORS allowlist, and the
browser's session cookie only from this server's own origin. Refusals accept and then close with a distinct
code so clients can tell why: 4401 unauthenticated, 4403 forbidden origin."""
from importlib import import_module
from types import SimpleNamespace
from urllib.parse import urlsplit

from channels.db import database_sync_to_async
from django.conf import settings
from django.http.cookie import parse_cookie

from auth_app.authentication import credentials_to_token, is_own_origin

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404


def _header(scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""


async def refuse(receive, send, code: int) -> None:
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": code})


def origin_allowed(origin: str, host: str) -> bool:
    if not origin:
        return True  # not a browser: nothing cross-site to defend against
    if origin in settings.CORS_ALLOWED_ORIGINS:
        return True
    return urlsplit(origin).netloc == host


class WebSocketOriginValidator:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if not origin_allowed(_header(scope, b"origin"), _header(scope, b"host")):
            return await refuse(receive, send, CLOSE_FORBIDDEN)
        return await self.app(scope, receive, send)


@database_sync_to_async
def _token_for(authorization: str, query_string: str):
    try:
        token = credentials_to_token(authorization, query_string)
    except ValueError:
        return None
    if token is not None:
        token.user  # noqa: B018  (load the user inside the DB thread)
    return token


@database_sync_to_async
def _browser_user(scope):
    """The signed-in user of the session cookie, when the page that opened the socket is one of ours (a
    browser always sends Origin with a WebSocket handshake), else None."""
    from django.contrib.auth import get_user

    if not is_own_origin(_header(scope, b"origin"), _header(scope, b"host")):
        return None
    session_key = parse_cookie(_header(scope, b"cookie")).get(settings.SESSION_COOKIE_NAME)
    if not session_key:
        return None
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = get_user(SimpleNamespace(session=session))
    return user if user.is_authenticated and user.is_active else None


class WebSocketAuthMiddleware:
    """`ticket_user(scope)`: an async resolver of a one-time ticket for clients that cannot send credentials
    (pty.connectToken); consulted only when the request carries no credentials at all, as is the browser's
    session cookie after it."""

    def __init__(self, app, ticket_user=None):
        self.app = app
        self.ticket_user = ticket_user

    async def __call__(self, scope, receive, send):
        authorization = _header(scope, b"authorization")
        query_string = scope.get("query_string", b"").decode("latin-1")
        token = await _token_for(authorization, query_string)
        if token is not None:
            return await self.app(dict(scope, user=token.user, api_token_id=token.id), receive, send)
        user = None
        if not authorization and "auth_token=" not in query_string:
            if self.ticket_user is not None:
                user = await self.ticket_user(scope)
            if user is None:
                user = await _browser_user(scope)
        if user is None:
            return await refuse(receive, send, CLOSE_UNAUTHENTICATED)
        return await self.app(dict(scope, user=user, api_token_id=None), receive, send)
