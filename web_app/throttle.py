"""The one throttle of every password check (web_app.models.SignInThrottle): the sign-in page and the admin's
login through PasswordBackend, the account page's old password through sign_in_attempt.

Where: PasswordBackend is the project's only authentication backend that checks a password, so every form
that signs in with one (ours, the admin's AuthenticationForm, any later one) goes through it, and it refuses
before the hash is compared. Django's user_login_failed signal comes only after the check, and a decorator
covers only the views someone remembered. PasswordChangeForm checks the old password with
user.check_password(), not through a backend: the account page counts that attempt itself.

Who is counted (OWASP's "device cookies"). A count per username alone let anyone lock a person out with five
wrong guesses; counts per address alone let a botnet guess freely. So:
- A browser that signed in as a person holds a signed device cookie naming them (DEVICE_COOKIE). Its attempts
  at that username count against that browser alone (SIGNIN_FAILURES_PER_USER a window): an outsider's
  guesses never hold it up, and a stolen or borrowed browser still cannot guess freely.
- Every other attempt counts against the username from that address (SIGNIN_FAILURES_PER_USER), the address
  whatever the username (SIGNIN_FAILURES_PER_ADDRESS; IPv6 by its /64, which one client usually holds whole),
  and the username from every browser it never signed in from, all addresses together
  (SIGNIN_FAILURES_PER_USER_NEW_BROWSERS): that bounds guessing spread over many addresses. An outsider can
  use that last count up, and then the person can sign in only from a browser they used before, for the
  rest of the window; that is the price of the bound.
The address is REMOTE_ADDR: X-Forwarded-For counts only from the proxies the operator names
(AGENTSERVER_TRUSTED_PROXIES, server/serve.py).

An attempt takes its place in its counts before the password is checked, under a row lock: a burst of
concurrent guesses is held at the limit, not just guesses one after another. A success gives its places
back and clears the count of that browser (or of the username from that address)."""
from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core import signing
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from web_app import store

DEVICE_COOKIE = "agentserver_device"
DEVICE_DAYS = 365
_DEVICE_SALT = "web_app.throttle.device"
# Where the backend leaves what the response must carry: a refusal (for the form's message) or a new device
# cookie (web_app.middleware.TrustedDeviceCookie sets it).
_REFUSED = "_password_attempt_refused"
_NEW_DEVICE = "_password_device_cookie"


@dataclass(frozen=True)
class Attempt:
    keys: tuple[str, ...]
    allowed: bool
    retry_after: int = 0  # seconds, when refused
    clear: tuple[str, ...] = ()  # counts a success resets


def client_address(request: HttpRequest) -> str:
    address = request.META.get("REMOTE_ADDR") or "unknown"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:50]
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def _name(username: str) -> str:
    return username.strip().lower()[:200]


def _device_of(request: HttpRequest, name: str) -> str | None:
    """The id of this browser when its device cookie names this username, else None."""
    try:
        value = signing.loads(request.COOKIES.get(DEVICE_COOKIE, ""), salt=_DEVICE_SALT,
                              max_age=timedelta(days=DEVICE_DAYS))
    except signing.BadSignature:
        return None
    if isinstance(value, dict) and value.get("user") == name and isinstance(value.get("id"), str):
        return value["id"]
    return None


def sign_in_attempt(request: HttpRequest, *, username: str) -> Attempt:
    """Count one password attempt at `username` from this request's browser, or refuse it when a count it
    falls under is at its limit within the window."""
    name = _name(username)
    device = _device_of(request, name)
    if device is not None:
        limits = [(f"device:{device}", settings.SIGNIN_FAILURES_PER_USER)]
        clear: tuple[str, ...] = (limits[0][0],)
    else:
        address = client_address(request)
        limits = [(f"user-at:{name}|{address}", settings.SIGNIN_FAILURES_PER_USER),
                  (f"address:{address}", settings.SIGNIN_FAILURES_PER_ADDRESS),
                  (f"user:{name}", settings.SIGNIN_FAILURES_PER_USER_NEW_BROWSERS)]
        clear = (limits[0][0],)
    keys = tuple(sorted(key for key, _ in limits))
    # The rows exist before any is locked, and are locked in one order: concurrent attempts queue, never deadlock.
    store.throttle_rows_made(keys)
    with transaction.atomic():
        return _count(limits, keys, clear)


def _count(limits: list[tuple[str, int]], keys: tuple[str, ...], clear: tuple[str, ...]) -> Attempt:
    now = timezone.now()
    window = timedelta(seconds=settings.SIGNIN_WINDOW_SECONDS)
    rows = store.throttle_rows_locked(keys)
    for key, limit in limits:
        row = rows[key]
        if row.window_started + window <= now:
            row.window_started, row.attempts = now, 0
        if row.attempts >= limit:
            return Attempt(keys=keys, allowed=False,
                           retry_after=max(1, int((row.window_started + window - now).total_seconds())))
    for row in rows.values():
        row.attempts += 1
        store.throttle_row_saved(row)
    return Attempt(keys=keys, allowed=True, clear=clear)


def sign_in_succeeded(attempt: Attempt) -> None:
    """The password was right: the attempt was no guess."""
    store.throttle_forgiven(clear=attempt.clear, lessen=set(attempt.keys) - set(attempt.clear))


def too_many_message(retry_after: int) -> str:
    minutes = -(-retry_after // 60)
    return f"Too many failed sign-ins. Try again in {minutes} minute{'s' if minutes > 1 else ''}."


def refusal(request: HttpRequest) -> Attempt | None:
    """The refused attempt, when PasswordBackend refused this request's password unchecked."""
    return getattr(request, _REFUSED, None)


def trust_device(request: HttpRequest, *, username: str) -> None:
    """This browser signed in as `username` with the password: from now on it counts on its own."""
    name = _name(username)
    device = _device_of(request, name) or secrets.token_urlsafe(18)
    setattr(request, _NEW_DEVICE, signing.dumps({"user": name, "id": device}, salt=_DEVICE_SALT))


def new_device_cookie(request: HttpRequest) -> str | None:
    return getattr(request, _NEW_DEVICE, None)


class PasswordBackend(ModelBackend):
    """Django's ModelBackend behind the throttle. Without a request (a management command, the test client's
    login()) no browser is guessing, and nothing is counted."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if request is None or username is None or password is None:
            return super().authenticate(request, username=username, password=password, **kwargs)
        attempt = sign_in_attempt(request, username=str(username))
        if not attempt.allowed:
            setattr(request, _REFUSED, attempt)
            raise PermissionDenied(too_many_message(attempt.retry_after))  # no other backend may try either
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            sign_in_succeeded(attempt)
            trust_device(request, username=user.get_username())
        return user
