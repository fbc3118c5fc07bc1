"""Signing in and out in a browser: agentserver's own page, a username and password against Django's users,
a CSRF-protected form, password attempts throttled (web_app/throttle.py, the admin's login too); optional single
sign-on (oidc.py)."""
from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import authenticate, login, logout
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from django.views.decorators.debug import sensitive_post_parameters

from agentserver.events import publisher as events
from auth_app.authentication import browser_stream_id
from web_app.throttle import refusal, too_many_message

SIGNIN_PATH = "/signin"
SIGNOUT_PATH = "/signout"
MAX_FIELD = 300


def signed_in_user(request: HttpRequest):
    """The signed-in user, or None (a request without the session cookie runs no session middleware)."""
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated and user.is_active else None


def safe_next(request: HttpRequest, value: str | None) -> str:
    """Where to go after signing in: a path on this server, never another site."""
    if value and value.startswith("/") and not value.startswith(("//", "/\\")) and url_has_allowed_host_and_scheme(
            value, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return value
    return "/"


def signin_url(next_path: str) -> str:
    return SIGNIN_PATH + ("?" + urlencode({"next": next_path}) if next_path and next_path != "/" else "")


def _page(request: HttpRequest, *, next_path: str, username: str = "", error: str = "", status: int = 200):
    context = {"next": next_path, "username": username, "error": error,
               "sso_name": getattr(settings, "OIDC_PROVIDER_NAME", None) if settings.OIDC_ISSUER else None,
               "sso_failed": request.GET.get("sso") == "failed"}
    return render(request, "web_app/signin.html", context, status=status)


@sensitive_post_parameters("password")
@never_cache
@ensure_csrf_cookie
@csrf_protect
def signin(request: HttpRequest) -> HttpResponse:
    next_path = safe_next(request, request.POST.get("next") or request.GET.get("next"))
    if request.method == "GET":
        if signed_in_user(request) is not None:
            return redirect(next_path)
        return _page(request, next_path=next_path)
    if request.method != "POST":
        return HttpResponseNotAllowed(["GET", "POST"])
    username = request.POST.get("username", "")[:MAX_FIELD].strip()
    password = request.POST.get("password", "")[:4096]
    if not username or not password or "\x00" in username + password:  # PostgreSQL stores no NUL
        return _page(request, next_path=next_path, username=username, status=400,
                     error="Enter your username and password.")
    user = authenticate(request, username=username, password=password)
    if user is None and (refused := refusal(request)) is not None:
        response = _page(request, next_path=next_path, username=username, status=429,
                         error=too_many_message(refused.retry_after))
        response["Retry-After"] = str(refused.retry_after)
        return response
    if user is None:
        return _page(request, next_path=next_path, username=username, status=401,
                     error="Wrong username or password.")
    with transaction.atomic():  # the session and its audit record (web_app/sign_in_records.py) together
        login(request, user)
    return redirect(next_path)


class AdminSignInForm(AdminAuthenticationForm):
    """The admin's login form, saying so when the throttle refused the attempt unchecked."""

    def get_invalid_login_error(self) -> ValidationError:
        refused = refusal(self.request) if self.request is not None else None
        if refused is not None:
            return ValidationError(too_many_message(refused.retry_after), code="throttled")
        return super().get_invalid_login_error()


@never_cache
@csrf_protect
def signout(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    stream_id = browser_stream_id(request.session.session_key)
    with transaction.atomic():
        logout(request)
    if stream_id:
        events.revoke_token(stream_id)  # the browser's open event streams end with its session
    return redirect(SIGNIN_PATH)
