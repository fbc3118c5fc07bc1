"""WebSocket gatekeeping: the Host checked against ALLOWED_HOSTS as Django checks an HTTP request's, the same
credentials as HTTP, Origin checked against the CORS allowlist, and the browser's session cookie only from
this server's own origin. A foreign Host is refused at the handshake (403), before anything else runs; other
refusals accept and then close with a distinct code so clients can tell why: 4401 unauthenticated, 4403
forbidden (the origin; a terminal's, the organization's policy). The scope says which credential opened the socket (`credential_id`), so that the socket
closes when that credential ends (agentserver.events.connections). A token's first use from an address is recorded
here as over HTTP (auth_app/token_use.py)."""
from importlib import import_module
from types import SimpleNamespace

from channels.db import database_sync_to_async
from django.conf import settings
from django.http.cookie import parse_cookie
from django.http.request import split_domain_port, validate_host

from audit_app.actors import Actor
from auth_app.authentication import (
    browser_stream_id,
    credentials_to_token,
    is_own_origin,
)
from auth_app.token_use import note_token_use

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


async def refuse_handshake(receive, send) -> None:
    """Close before accepting: the client's handshake is answered 403."""
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": 1008})


def _host(scope) -> str:
    """The Host the handshake names, as HttpRequest.get_host reads it (X-Forwarded-Host when trusted)."""
    if settings.USE_X_FORWARDED_HOST and _header(scope, b"x-forwarded-host"):
        return _header(scope, b"x-forwarded-host")
    return _header(scope, b"host")


def host_allowed(host: str) -> bool:
    """Django's own check of an HTTP request's Host (HttpRequest.get_host), for a handshake."""
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, allowed)


def scheme_of(scope) -> str:
    """The page's scheme a handshake came from (ws → http, wss → https), trusting the proxy's header as
    HttpRequest.is_secure does."""
    if settings.SECURE_PROXY_SSL_HEADER:
        header, secure = settings.SECURE_PROXY_SSL_HEADER
        value = _header(scope, header.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1"))
        if value:
            return "https" if value.split(",")[0].strip() == secure else "http"
    return "https" if scope.get("scheme") in ("wss", "https") else "http"


def origin_allowed(origin: str, scheme: str, host: str) -> bool:
    if not origin:
        return True  # not a browser: nothing cross-site to defend against
    if origin in settings.CORS_ALLOWED_ORIGINS:
        return True
    return is_own_origin(origin, scheme, host)


class WebSocketOriginValidator:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        host = _host(scope)
        if not host_allowed(host):
            return await refuse_handshake(receive, send)
        if not origin_allowed(_header(scope, b"origin"), scheme_of(scope), host):
            return await refuse(receive, send, CLOSE_FORBIDDEN)
        return await self.app(scope, receive, send)


@database_sync_to_async
def _token_for(scope, authorization: str, query_string: str):
    try:
        token = credentials_to_token(authorization, query_string)
    except ValueError:
        return None
    if token is not None:
        note_token_use(token=token, actor=Actor.person(token.user, token_id=token.pk, request=scope))
    return token


@database_sync_to_async
def _browser_user(scope):
    """(the signed-in user of the session cookie, the session's credential id) when the page that opened the
    socket is one of ours (a browser always sends Origin with a WebSocket handshake), else (None, None)."""
    from django.contrib.auth import get_user

    if not is_own_origin(_header(scope, b"origin"), scheme_of(scope), _host(scope)):
        return None, None
    session_key = parse_cookie(_header(scope, b"cookie")).get(settings.SESSION_COOKIE_NAME)
    if not session_key:
        return None, None
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = get_user(SimpleNamespace(session=session))
    if not user.is_authenticated or not user.is_active:
        return None, None
    return user, browser_stream_id(session.session_key)


class WebSocketAuthMiddleware:
    """`ticket_user(scope)`: an async resolver of a one-time ticket for clients that cannot send credentials
    (pty.connectToken) to (user, the credential id that asked for the ticket), or None; consulted only when the request carries no credentials at all, as is the browser's
    session cookie after it."""

    def __init__(self, app, ticket_user=None):
        self.app = app
        self.ticket_user = ticket_user

    async def __call__(self, scope, receive, send):
        authorization = _header(scope, b"authorization")
        query_string = scope.get("query_string", b"").decode("latin-1")
        token = await _token_for(scope, authorization, query_string)
        if token is not None:
            return await self.app(dict(scope, user=token.user, credential_id=token.id), receive, send)
        user = credential_id = None
        if not authorization and "auth_token=" not in query_string:
            if self.ticket_user is not None:
                user, credential_id = await self.ticket_user(scope) or (None, None)
            if user is None:
                user, credential_id = await _browser_user(scope)
        if user is None:
            return await refuse(receive, send, CLOSE_UNAUTHENTICATED)
        return await self.app(dict(scope, user=user, credential_id=credential_id), receive, send)
