"""The account page of every signed-in person, no admin needed: their API tokens (create one, for a while or
until revoked, shown once with the commands that use it; list; revoke), their password (changing it can revoke
every token too), their roots, their own spend on model calls (today, the budgets that apply, the last 30 days
as a chart and by model); staff get links to the admin and its usage dashboard."""
from __future__ import annotations

import datetime

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.forms import PasswordChangeForm
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters

from agentserver.events import publisher as events
from audit_app.actors import Actor
from audit_app.log import record
from auth_app.authentication import user_credential_id
from auth_app.tokens import (
    roots_of,
    token_create,
    token_of,
    token_revoke,
    tokens_of,
    tokens_revoke_all,
)
from policy_app.selectors import policy_for
from usage_app.budgets import budget_status
from usage_app.charts import CHART_JS, CHARTS
from usage_app.selectors import own_spend
from usage_app.zone import usage_zone
from web_app.signin import signed_in_user, signin_url
from web_app.throttle import sign_in_attempt, sign_in_succeeded

ACCOUNT_PATH = "/account"
TOKEN_NAME_MAX = 100
# What the form offers: "" never expires, else days.
TOKEN_LIFETIMES = (("", "never"), ("7", "7 days"), ("30", "30 days"), ("90", "90 days"))


def server_url(request: HttpRequest) -> str:
    return settings.PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


def connect_commands(request: HttpRequest, user, secret: str) -> dict:
    """Copy-paste lines that use a new token: the terminal UI, one-shot runs, the JS SDK."""
    url = server_url(request)
    roots = roots_of(user)
    directory = roots[0] if roots else "$PWD"
    name = user.get_username()
    return {
        "attach": f"opencode attach {url} -u {name} -p {secret} --dir {directory}",
        "run": f'opencode run --attach {url} -u {name} -p {secret} --dir {directory} "say hi"',
        "sdk": ('import { createOpencodeClient } from "@opencode-ai/sdk"\n'
                f'const client = createOpencodeClient({{ baseUrl: "{url}", '
                f'headers: {{ Authorization: "Bearer {secret}" }} }})'),
        "curl": f"curl -H 'Authorization: Bearer {secret}' {url}/session",
    }


def _render(request: HttpRequest, user, *, password_form=None, created=None, status: int = 200) -> HttpResponse:
    context = {
        "account": user, "roots": roots_of(user), "tokens": tokens_of(user=user),
        "password_form": password_form or PasswordChangeForm(user), "created": created,
        "server_url": server_url(request), "token_name_max": TOKEN_NAME_MAX, "lifetimes": TOKEN_LIFETIMES,
        "now": timezone.now(), "policy_rows": policy_for(user).summary(),
        "budgets": budget_status(person_id=user.id), "spend": own_spend(person=user), "zone": usage_zone().key,
        "chart_js": CHART_JS, "charts_js": CHARTS,
    }
    response = render(request, "web_app/account.html", context, status=status)
    response["Cache-Control"] = "no-store"  # a new token is on the page once, and never in a cache
    return response


def _signed_in_or_redirect(request: HttpRequest):
    user = signed_in_user(request)
    return (user, None) if user is not None else (None, redirect(signin_url(request.get_full_path())))


@never_cache
def account(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET"])
    user, away = _signed_in_or_redirect(request)
    return away or _render(request, user)


@never_cache
@csrf_protect
def token_new(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    user, away = _signed_in_or_redirect(request)
    if away:
        return away
    name = request.POST.get("name", "").strip()
    if not name or len(name) > TOKEN_NAME_MAX:
        messages.error(request, f"Give the token a name of 1 to {TOKEN_NAME_MAX} characters.")
        return _render(request, user, status=400)
    days = request.POST.get("lifetime", "")
    if days not in dict(TOKEN_LIFETIMES):
        choices = ", ".join(label for _, label in TOKEN_LIFETIMES)
        messages.error(request, f"Choose how long the token lasts: {choices}.")
        return _render(request, user, status=400)
    lifetime = datetime.timedelta(days=int(days)) if days else None
    token, secret = token_create(user=user, name=name, lifetime=lifetime, actor=Actor.person(user, request=request))
    created = {"token": token, "secret": secret, "commands": connect_commands(request, user, secret)}
    return _render(request, user, created=created, status=201)


@never_cache
@csrf_protect
def token_remove(request: HttpRequest, token_id: int) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    user, away = _signed_in_or_redirect(request)
    if away:
        return away
    token = token_of(user=user, token_id=token_id)
    if token is None:
        raise Http404("No such token")
    token_revoke(token=token, actor=Actor.person(user, request=request))
    messages.success(request, f"Token “{token.name}” ({token.prefix}…) revoked: clients using it are signed out.")
    return redirect(ACCOUNT_PATH)


@sensitive_post_parameters("old_password", "new_password1", "new_password2")
@never_cache
@csrf_protect
def password_change(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    user, away = _signed_in_or_redirect(request)
    if away:
        return away
    # The old password is a password guess like any other: a borrowed browser must not try them freely.
    attempt = sign_in_attempt(request, username=user.get_username())
    if not attempt.allowed:
        messages.error(request, "Too many wrong passwords. Try again later.")
        return _render(request, user, status=429)
    form = PasswordChangeForm(user, request.POST)
    if not form.is_valid():
        if "old_password" not in form.errors:
            sign_in_succeeded(attempt)  # the old password was right; only the new one was refused
        return _render(request, user, password_form=form, status=400)
    sign_in_succeeded(attempt)
    revoke = request.POST.get("revoke_tokens") == "on"
    actor = Actor.person(user, request=request)
    with transaction.atomic():
        form.save()
        record(action="password.changed", actor=actor, object_type="user", object_id=user.pk,
               details={"by": "the person, on the account page", "signedOutClients": revoke})
        revoked = tokens_revoke_all(user=form.user, actor=actor) if revoke else 0
    # This browser stays signed in; every other session ends (its auth hash no longer matches), and so do
    # the connections it opened (agentserver.events.connections).
    update_session_auth_hash(request, form.user)
    if revoke:
        events.revoke_token(user_credential_id(form.user))  # terminals opened with a one-time ticket
        messages.success(request, f"Password changed. {revoked} API token(s) revoked: clients using them are "
                                  "signed out.")
    else:
        messages.success(request, "Password changed.")
    return redirect(ACCOUNT_PATH)
