"""The credentials the API accepts: Bearer token, HTTP Basic username:token (opencode's -u/-p), and
`auth_token=<base64 username:token>` in the query for EventSource and WebSocket clients."""
import base64
import binascii
from urllib.parse import parse_qs

from rest_framework import authentication, exceptions

from agentserver.errors import REALM
from auth_app.tokens import token_lookup, token_lookup_for_user


def _basic_pair(encoded: str) -> tuple[str, str] | None:
    try:
        decoded = base64.b64decode(encoded.strip(), validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    username, sep, secret = decoded.partition(":")
    return (username, secret) if sep else None


def credentials_to_token(authorization: str, query_string: str):
    """Shared by HTTP views, SSE views and the WebSocket middleware. Returns an ApiToken or None;
    raises ValueError when credentials were offered but are wrong."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        scheme = scheme.lower()
        if scheme == "bearer":
            token = token_lookup(value.strip())
        elif scheme == "basic":
            pair = _basic_pair(value)
            token = token_lookup_for_user(*pair) if pair else None
            if token is None and pair:
                # opencode's clients default the username to "opencode"; accept the token with any name then.
                token = token_lookup(pair[1]) if pair[0] == "opencode" else None
        else:
            token = None
        if token is None:
            raise ValueError("Invalid credentials")
        return token
    query = parse_qs(query_string or "")
    if "auth_token" in query:
        pair = _basic_pair(query["auth_token"][0])
        token = None
        if pair:
            token = token_lookup_for_user(*pair) or (token_lookup(pair[1]) if pair[0] == "opencode" else None)
        if token is None:
            raise ValueError("Invalid auth_token")
        return token
    return None


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        try:
            token = credentials_to_token(
                request.META.get("HTTP_AUTHORIZATION", ""), request.META.get("QUERY_STRING", "")
            )
        except ValueError as error:
            raise exceptions.AuthenticationFailed(str(error))
        if token is None:
            return None
        return token.user, token

    def authenticate_header(self, request):
        return REALM


class JsonOnlySessionAuthentication(authentication.SessionAuthentication):
    """Django session login (the admin's), with CSRF enforced and unsafe requests held to JSON bodies:
    a cross-site form can send text/plain without a preflight (opencode's CVE-2026-22812)."""

    def enforce_csrf(self, request):
        super().enforce_csrf(request)
        if request.method not in ("GET", "HEAD", "OPTIONS", "TRACE"):
            content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
            body_present = request.META.get("CONTENT_LENGTH") not in (None, "", "0")
            if body_present and content_type != "application/json":
                raise exceptions.PermissionDenied("Cookie-authenticated requests must send application/json")
