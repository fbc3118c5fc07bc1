"""The rows web_app reads and writes, and the only code that touches them: the password throttle's counters
(SignInThrottle), single sign-on's links (SingleSignOnIdentity) and the users it finds or makes."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from web_app.models import SignInThrottle, SingleSignOnIdentity

# ---- the password throttle ---------------------------------------------------------------------------


def throttle_rows_made(keys: tuple[str, ...]) -> None:
    """A counter row for each key that has none (its window starting now)."""
    SignInThrottle.objects.bulk_create([SignInThrottle(key=key, window_started=timezone.now()) for key in keys],
                                       ignore_conflicts=True)


def throttle_rows_locked(keys: tuple[str, ...]) -> dict[str, SignInThrottle]:
    """The keys' counter rows by key, locked in key order (in the caller's transaction)."""
    return {row.key: row for row in SignInThrottle.objects.select_for_update().filter(key__in=keys).order_by("key")}


def throttle_row_saved(row: SignInThrottle) -> None:
    row.save(update_fields=["window_started", "attempts"])


def throttle_forgiven(*, clear: tuple[str, ...], lessen: set[str]) -> None:
    """The `clear` counters go; the `lessen` ones count one attempt fewer."""
    SignInThrottle.objects.filter(key__in=clear).delete()
    SignInThrottle.objects.filter(key__in=lessen, attempts__gt=0).update(attempts=F("attempts") - 1)


# ---- single sign-on --------------------------------------------------------------------------------------


def usernames_starting(prefix: str) -> set[str]:
    return set(get_user_model().objects.filter(username__startswith=prefix).values_list("username", flat=True))


def identity_link(*, issuer: str, subject: str) -> SingleSignOnIdentity | None:
    """The link of an identity, its user read with it."""
    return SingleSignOnIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()


def active_users_with_email(email: str, *, limit: int) -> list:
    return list(get_user_model().objects.filter(email__iexact=email, is_active=True)[:limit])


def user_made_without_password(*, username: str, email: str):
    """A new user who can sign in only through single sign-on."""
    user = get_user_model().objects.create_user(username=username, email=email)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    return user


def identity_linked(*, user, issuer: str, subject: str):
    """Link the identity to `user`; the user it is linked to (another one when the same identity, signing
    in twice at once, was linked first)."""
    try:
        with transaction.atomic():
            SingleSignOnIdentity.objects.create(user=user, issuer=issuer, subject=subject)
    except IntegrityError:  # the same identity signing in twice at once: the first link stands
        return SingleSignOnIdentity.objects.get(issuer=issuer, subject=subject).user
    return user


def has_identity(user) -> bool:
    return SingleSignOnIdentity.objects.filter(user=user).exists()
