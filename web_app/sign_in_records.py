"""Sign-ins, refused sign-ins and sign-outs in the audit log, whichever form they came through (the sign-in
page, the admin's login, single sign-on): Django's auth signals are the one point every one of them passes.
A refused attempt is a failure (wrong username or password) or refused (the throttle held it unchecked)."""
from __future__ import annotations

from django.contrib.auth.signals import (
    user_logged_in,
    user_logged_out,
    user_login_failed,
)

from audit_app.actors import Actor
from audit_app.log import FAILURE, REFUSED, record
from web_app.throttle import refusal

SSO_BACKEND = "web_app.oidc.IdentityBackend"


def _signed_in(sender, request, user, **kwargs) -> None:
    sso = getattr(user, "backend", "") == SSO_BACKEND
    record(action="auth.sso_signin" if sso else "auth.signin", actor=Actor.person(user, request=request),
           object_type="user", object_id=user.pk, details={"path": request.path if request else ""})


def _refused(sender, credentials, request=None, **kwargs) -> None:
    if request is None:
        return  # a management command or a script: no one signed in anywhere
    username = str(credentials.get("username", ""))[:150]
    throttled = refusal(request) is not None
    record(action="auth.signin_failed", actor=Actor.anonymous(request, name=username), object_type="user",
           object_id=username, outcome=REFUSED if throttled else FAILURE,
           details={"path": request.path, "reason": "throttled" if throttled else "wrong username or password"})


def _signed_out(sender, request, user, **kwargs) -> None:
    if user is None:
        return  # signing out a browser that was not signed in
    record(action="auth.signout", actor=Actor.person(user, request=request), object_type="user",
           object_id=user.pk, details={"path": request.path if request else ""})


def connect() -> None:
    user_logged_in.connect(_signed_in, dispatch_uid="audit.signed_in")
    user_login_failed.connect(_refused, dispatch_uid="audit.refused")
    user_logged_out.connect(_signed_out, dispatch_uid="audit.signed_out")
