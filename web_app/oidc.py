"""Optional single sign-on through OpenID Connect (mozilla-django-oidc), on when AGENTSERVER_OIDC_ISSUER is
set: the provider's endpoints come from its discovery document, and an identity it verified (its issuer
and subject) signs in the user it is linked to. The first time, it is linked by email, or, when
AGENTSERVER_OIDC_CREATE_USERS allows it, to a new user with no roots until an administrator gives some (with
the email only when the provider says it is verified); otherwise it is refused.

Linking by email hands an account to whoever controls the address, so both sides must be trustworthy: the
provider says it verified the address, and the account's own email was set by an administrator. agentserver
has no other way to set an email but the admin, the management commands and this module, so an account with no
identity linked yet has an administrator's email; one made or linked here has a provider's (before providers'
unverified addresses were dropped, possibly unverified), and gets no second identity by email. Staff and
superusers are never linked by email: an administrator links their identity, if at all, by hand."""
from __future__ import annotations

import functools
import re

import httpx
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.urls import path
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from audit_app.actors import Actor
from audit_app.log import record
from web_app import store

_DISCOVERED = {"OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
               "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint", "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
               "OIDC_OP_JWKS_ENDPOINT": "jwks_uri"}
_NOT_IN_USERNAMES = re.compile(r"[^\w.@+-]")


@functools.cache
def discovery() -> dict:
    """The provider's /.well-known/openid-configuration, read once per process (a failure is retried)."""
    response = httpx.get(f"{settings.OIDC_ISSUER}/.well-known/openid-configuration", timeout=10)
    response.raise_for_status()
    document = response.json()
    if document.get("issuer", "").rstrip("/") != settings.OIDC_ISSUER:
        raise SuspiciousOperation(f"The provider at {settings.OIDC_ISSUER} names another issuer")
    return document


def oidc_setting(attr: str, *default):
    if attr in _DISCOVERED:
        return discovery()[_DISCOVERED[attr]]
    return import_from_settings(attr, *default)


def _free_username(claims: dict) -> str:
    wanted = claims.get(settings.OIDC_USERNAME_CLAIM) or (claims.get("email") or "").split("@")[0] or "user"
    base = _NOT_IN_USERNAMES.sub("-", str(wanted))[:140] or "user"
    taken = store.usernames_starting(base)
    candidate, counter = base, 1
    while candidate in taken:
        counter += 1
        candidate = f"{base}-{counter}"
    return candidate


@transaction.atomic
def identity_user(*, issuer: str, subject: str, claims: dict):
    """The user a verified identity signs in, linking it on first use; None when it has no account here."""
    link = store.identity_link(issuer=issuer, subject=subject)
    if link is not None:
        return link.user if link.user.is_active else None
    email = claims.get("email") if claims.get("email_verified") is True else None
    if not isinstance(email, str) or "@" not in email or len(email) > 254:
        email = None
    user = None
    if email:
        matches = store.active_users_with_email(email, limit=2)
        if matches and not (len(matches) == 1 and _linkable_by_email(matches[0])):
            return None  # the address is an account's that this identity may not claim: not a second account
        user = matches[0] if matches else None
    if user is None and settings.OIDC_CREATE_USER:
        user = store.user_made_without_password(username=_free_username(claims), email=email or "")
        record(action="auth.account_created", actor=Actor.person(user), object_type="user", object_id=user.pk,
               details={"issuer": issuer, "subject": subject, "username": user.get_username()})
    if user is None:
        return None
    return store.identity_linked(user=user, issuer=issuer, subject=subject)


def _linkable_by_email(user) -> bool:
    """Whether an identity may be linked to this user, the one with its verified email, by the email alone."""
    return not (user.is_staff or user.is_superuser or store.has_identity(user))


class IdentityBackend(OIDCAuthenticationBackend):
    get_settings = staticmethod(oidc_setting)

    def verify_claims(self, claims: dict) -> bool:
        return bool(claims.get("sub"))

    def get_or_create_user(self, access_token, id_token, payload):
        if payload.get("iss", "").rstrip("/") != settings.OIDC_ISSUER or not payload.get("sub"):
            raise SuspiciousOperation("The ID token names another issuer, or no subject")
        user_info = self.get_userinfo(access_token, id_token, payload)
        if user_info.get("sub") != payload["sub"]:
            raise SuspiciousOperation("The user info names another subject than the ID token")
        return identity_user(issuer=settings.OIDC_ISSUER, subject=str(payload["sub"]),
                             claims={**payload, **user_info})


class SignInRequest(OIDCAuthenticationRequestView):
    get_settings = staticmethod(oidc_setting)


class SignInCallback(OIDCAuthenticationCallbackView):
    get_settings = staticmethod(oidc_setting)


urlpatterns = [
    path("oidc/authenticate/", SignInRequest.as_view()),
    # Named as the library expects: it builds the redirect URI with reverse().
    path("oidc/callback/", SignInCallback.as_view(), name="oidc_authentication_callback"),
]
