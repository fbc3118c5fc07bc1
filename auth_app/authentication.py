"""The credentials the API accepts: Bearer token, HTTP Basic username:token (opencode's -u/-p), and
`auth_token=<base64 username:token>` in the query for EventSource and WebSocket clients; and the browser's
Django session (signed in at /signin or /admin/), only from this server's own pages."""
import base64
import binascii
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils.crypto import constant_time_compare
from rest_framework import authentication, exceptions

from agentserver.errors import REALM
from audit_app.actors import Actor, act_as
from auth_app import store
from auth_app.token_use import note_token_use
from auth_app.tokens import live_token_ids, token_lookup, token_lookup_for_user

# To a browser: a Basic challenge would make it prompt for a password (headless, the page's fetch never settles)
# on the web app's own requests once its session ended; the app signs in again at /signin instead.
BROWSER_REALM = 'Session realm="agentserver"'
FETCH_METADATA = ("HTTP_SEC_FETCH_SITE", "HTTP_SEC_FETCH_MODE", "HTTP_SEC_FETCH_DEST")


def challenge(request) -> str:
    """The WWW-Authenticate of a 401: Basic for API clients, none a browser prompts for when a browser made
    the request (fetch metadata, or our own Origin or Referer) or a session cookie came with it."""
    meta = request.META
    if settings.SESSION_COOKIE_NAME in request.COOKIES or any(meta.get(name) for name in FETCH_METADATA):
        return BROWSER_REALM
    scheme, host = request.scheme, request.get_host()
    origin, referer = meta.get("HTTP_ORIGIN"), meta.get("HTTP_REFERER")
    own = (origin and is_own_origin(origin, scheme, host)) or (referer and is_own_origin(origin_of(referer), scheme,
                                                                                          host))
    return BROWSER_REALM if own else REALM


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
        actor = Actor.person(token.user, token_id=token.pk, request=request)
        act_as(actor)  # what this request does is recorded as this token's (audit_app/actors.py)
        note_token_use(token=token, actor=actor)
        return token.user, token

    def authenticate_header(self, request):
        return challenge(request)


SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")
COOKIE_REFUSED = "The session cookie is accepted only from this server's own pages"


DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def origin_of(url: str) -> str:
    """scheme://host[:port] of a URL, the port left out when it is the scheme's default (as browsers send it)."""
    parts = urlsplit(url)
    scheme, netloc = parts.scheme.lower(), parts.netloc.lower()
    return f"{scheme}://{netloc.removesuffix(DEFAULT_PORTS.get(scheme, '@'))}"


def is_own_origin(origin: str, scheme: str, host: str) -> bool:
    """`origin` (scheme://host[:port]) names this server: the request's own scheme and Host, or the public
    URL exactly. A page on http://host is another origin than https://host: it cannot ride the cookie of a
    server answering on https, nor the reverse."""
    if not origin or origin == "null":
        return False
    origin = origin_of(origin)
    if settings.PUBLIC_URL and origin == origin_of(settings.PUBLIC_URL):
        return True
    return origin == origin_of(f"{scheme}://{host}")


def from_own_pages(meta: dict, method: str, scheme: str, host: str) -> bool:
    """Whether a browser request was made by this server's own pages. SameSite=Lax still sends the cookie
    with a cross-site top-level GET, and a page elsewhere can load any URL as an image or script: reads
    are checked as much as writes. The browser's word, in order: Origin (sent with every cross-site and
    every unsafe request), Sec-Fetch-Site (sent by current browsers to https and loopback origins; "none"
    is the person typing the URL), else the Referer (plain HTTP to another host), which no page elsewhere
    can set to ours."""
    origin = meta.get("HTTP_ORIGIN")
    if origin is not None and not is_own_origin(origin, scheme, host):
        return False
    site = meta.get("HTTP_SEC_FETCH_SITE")
    if site is not None:
        return site == "same-origin" or (site == "none" and method in SAFE_METHODS)
    if origin is not None:
        return True
    referer = meta.get("HTTP_REFERER", "")
    return bool(referer) and is_own_origin(origin_of(referer), scheme, host)


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
    if not from_own_pages(request.META, request.method, request.scheme, request.get_host()):
        raise ValueError(COOKIE_REFUSED)
    return BrowserSession(user=user, pk=browser_stream_id(request.session.session_key))


def browser_stream_id(session_key: str | None) -> str | None:
    """The credential id under which a signed-in browser's connections are held, as a token's are by its pk."""
    return f"{BROWSER_STREAM_PREFIX}{session_key}" if session_key else None


def request_credential_id(request) -> int | str | None:
    """The id of the credential a DRF request came with: its API token's pk, or its browser session's."""
    if request.auth is not None:
        return request.auth.pk
    session = getattr(request._request, "session", None)
    return browser_stream_id(session.session_key) if session is not None else None


USER_PREFIX = "user:"


def user_credential_id(user) -> str:
    """The credential id of connections opened for a user as a whole (a one-time terminal ticket)."""
    return f"{USER_PREFIX}{user.pk}"


def live_credentials(credentials: set) -> set:
    """Those of the open connections' credentials that still stand: tokens not revoked or expired (their user
    active); browser sessions not signed out or expired, whose user is active and whose password is the one
    they signed in with; users still active."""
    live = live_token_ids({c for c in credentials if isinstance(c, int)})
    named = [c for c in credentials if isinstance(c, str)]
    session_keys = {c.removeprefix(BROWSER_STREAM_PREFIX) for c in named if c.startswith(BROWSER_STREAM_PREFIX)}
    live |= {browser_stream_id(key) for key in _standing_sessions(session_keys)}
    user_ids = {int(c.removeprefix(USER_PREFIX)) for c in named
                if c.startswith(USER_PREFIX) and c.removeprefix(USER_PREFIX).isdigit()}
    if user_ids:
        live |= {f"{USER_PREFIX}{pk}" for pk in store.active_user_ids(user_ids)}
    return live


def _standing_sessions(session_keys: set[str]) -> set[str]:
    """Of these session keys, those Django would still sign in with: not expired, the user active, the
    session's auth hash still the user's (a password change ends every session that has not been given the
    new one; Django's own check, django.contrib.auth.get_user, without its side effects)."""
    if not session_keys:
        return set()
    sessions = {}
    for row in store.unexpired_browser_sessions(session_keys):
        data = row.get_decoded()
        if data.get(SESSION_KEY) is not None:
            sessions[row.session_key] = data
    User = get_user_model()
    user_ids = {User._meta.pk.to_python(data[SESSION_KEY]) for data in sessions.values()}
    users = store.active_users_by_id(user_ids)
    standing = set()
    for key, data in sessions.items():
        user = users.get(User._meta.pk.to_python(data[SESSION_KEY]))
        session_hash = data.get(HASH_SESSION_KEY)
        if user is not None and session_hash and any(
                constant_time_compare(session_hash, candidate)
                for candidate in (user.get_session_auth_hash(), *user.get_session_auth_fallback_hash())):
            standing.add(key)
    return standing


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
        act_as(Actor.person(session.user, request=request))
        return session.user, None

    def enforce_csrf(self, request):
        if request.method not in SAFE_METHODS:
            content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
            body_present = request.META.get("CONTENT_LENGTH") not in (None, "", "0")
            if body_present and content_type != "application/json":
                raise exceptions.PermissionDenied("Cookie-authenticated requests must send application/json")
