"""Failed sign-ins, throttled per username and per client address (web_app.models.SignInThrottle).

An attempt takes its place in both counts before the password is checked, under a row lock: a burst of
concurrent guesses is held at the limit, not just guesses one after another. A success gives its place back
(and clears the username's count, so a person who mistyped is not held up later)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from web_app.models import SignInThrottle


@dataclass(frozen=True)
class Attempt:
    keys: tuple[str, ...]
    allowed: bool
    retry_after: int = 0  # seconds, when refused


def _limits(username: str, address: str) -> list[tuple[str, int]]:
    return [(f"user:{username.strip().lower()[:250]}", settings.SIGNIN_FAILURES_PER_USER),
            (f"address:{address}", settings.SIGNIN_FAILURES_PER_ADDRESS)]


def sign_in_attempt(*, username: str, address: str) -> Attempt:
    """Count one attempt, or refuse it when either count is at its limit within the window."""
    limits = _limits(username, address)
    keys = tuple(key for key, _ in limits)
    # The rows exist before any is locked, and are locked in one order: concurrent attempts queue, never deadlock.
    SignInThrottle.objects.bulk_create([SignInThrottle(key=key, window_started=timezone.now()) for key in keys],
                                       ignore_conflicts=True)
    with transaction.atomic():
        return _count(limits, keys)


def _count(limits: list[tuple[str, int]], keys: tuple[str, ...]) -> Attempt:
    now = timezone.now()
    window = timedelta(seconds=settings.SIGNIN_WINDOW_SECONDS)
    rows = {row.key: row for row in SignInThrottle.objects.select_for_update().filter(key__in=keys).order_by("key")}
    for key, limit in limits:
        row = rows[key]
        if row.window_started + window <= now:
            row.window_started, row.attempts = now, 0
        if row.attempts >= limit:
            return Attempt(keys=keys, allowed=False,
                           retry_after=max(1, int((row.window_started + window - now).total_seconds())))
    for row in rows.values():
        row.attempts += 1
        row.save(update_fields=["window_started", "attempts"])
    return Attempt(keys=keys, allowed=True)


def sign_in_succeeded(attempt: Attempt) -> None:
    user_key, address_key = attempt.keys
    SignInThrottle.objects.filter(key=user_key).delete()
    SignInThrottle.objects.filter(key=address_key, attempts__gt=0).update(attempts=F("attempts") - 1)
