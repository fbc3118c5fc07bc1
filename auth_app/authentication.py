"""The credentials the API accepts: Bearer token, HTTP Basic username:token (opencode's -u/-p), and
`auth_token=<base64 username:token>` in the query for EventSource and WebSocket clients; and the browser's
Django session (signed in at /signin or /admin/), only from this server's own pages."""
import base64
import binascii
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.contrib.sessions.models import Session
from django.utils import timezone
from rest_framework import authentication, exceptions

from agentserver.errors import REALM
from auth_app.tokens import live_token_ids, token_lookup, token_lookup_for_user

# To a signed-in (or signed-out) browser: a Basic challenge would make it prompt for a password on the web
# app's own requests; it signs in again at /signin instead.
BROWSER_REALM = 'Session realm="agentserver"'


def challenge(request) -> str:
    """The WWW-Authenticate of a 401: Basic for API clients, none a browser prompts for when a session
    cookie came with the request."""
    return BROWSER_REALM if settings.SESSION_COOKIE_NAME in request.COOKIES else REALM


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
        return challenge(request)


SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")
COOKIE_REFUSED = "The session cookie is accepted only from this server's own pages"


def is_own_origin(origin: str, host: str) -> bool:
    """`origin` (scheme://host[:port]) names this server: its Host, or its public URL behind a proxy."""
    if not origin or origin == "null":
        return False
    if settings.PUBLIC_URL and origin == "{0.scheme}://{0.netloc}".format(urlsplit(settings.PUBLIC_URL)):
        return True
    return urlsplit(origin).netloc == host


def from_own_pages(meta: dict, method: str, host: str) -> bool:
    """Whether a browser request was made by this server's own pages. SameSite=Lax still sends the cookie
    with a cross-site top-level GET, and a page elsewhere can load any URL as an image or script: reads
    are checked as much as writes. The browser's word, in order: Origin (sent with every cross-site and
    every unsafe request), Sec-Fetch-Site (sent by current browsers to https and loopback origins; "none"
    is the person typing the URL), else the Referer (plain HTTP to another host), which no page elsewhere
    can set to ours."""
    origin = meta.get("HTTP_ORIGIN")
    if origin is not None and not is_own_origin(origin, host):
        return False
    site = meta.get("HTTP_SEC_FETCH_SITE")
    if site is not None:
        return site == "same-origin" or (site == "none" and method in SAFE_METHODS)
    if origin is not None:
        return True
    referer = meta.get("HTTP_REFERER", "")
    return bool(referer) and is_own_origin("{0.scheme}://{0.netloc}".format(urlsplit(referer)), host)


BROWSER_STREAM_PREFIX = "session:"


@dataclass
class BrowserSession:
    """The credentials of a signed-in browser, where the API otherwise holds an ApiToken (pk, user, roots)."""

    user: object
    pk: str | None = None  # "session:<key>": what sign-out revokes, so the browser's open streams close
    roots = None

    @property
    def user_id(self) -> int:
        return self.user.pk


def browser_session(request) -> BrowserSession | None:
    """The signed-in browser of a plain Django request (the event streams), or None. Raises ValueError
    when the session cookie came from another site."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    if not from_own_pages(request.META, request.method, request.get_host()):
        raise ValueError(COOKIE_REFUSED)
    return BrowserSession(user=user, pk=browser_stream_id(request.session.session_key))


def browser_stream_id(session_key: str | None) -> str | None:
    """The id under which a signed-in browser's event streams are held, as a token's are by its pk."""
    return f"{BROWSER_STREAM_PREFIX}{session_key}" if session_key else None


def live_stream_ids(stream_ids: set) -> set:
    """Those of the open streams' credentials that still stand: tokens not revoked (their user active), and
    browser sessions not signed out or expired."""
    session_keys = {i.removeprefix(BROWSER_STREAM_PREFIX) for i in stream_ids if isinstance(i, str)}
    live = live_token_ids({i for i in stream_ids if isinstance(i, int)})
    if session_keys:
        live |= {browser_stream_id(key) for key in Session.objects.filter(
            session_key__in=session_keys, expire_date__gt=timezone.now()).values_list("session_key", flat=True)}
    return live


class JsonOnlySessionAuthentication(authentication.SessionAuthentication):
    """The browser's Django session (opencode's web app on this origin, the admin), accepted only from this
    server's own pages (from_own_pages: that check is the CSRF defence, as the web app sends no CSRF
    token), with unsafe requests held to JSON bodies: a cross-site form can send text/plain without a
    preflight (opencode's CVE-2026-22812)."""

    def authenticate(self, request):
        try:
            session = browser_session(request._request)
        except ValueError as error:
            raise exceptions.AuthenticationFailed(str(error))
        if session is None:
            return None
        self.enforce_csrf(request)
        return session.user, None

    def enforce_csrf(self, request):
        if request.method not in SAFE_METHODS:
            content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
            body_present = request.META.get("CONTENT_LENGTH") not in (None, "", "0")
            if body_present and content_type != "application/json":
                raise exceptions.PermissionDenied("Cookie-authenticated requests must send application/json")
