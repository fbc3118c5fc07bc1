"""The session lease: one row per session saying which worker runs its agent loop, until when, and in what
status. Acquiring is one conditional UPDATE (or an INSERT that loses on the primary key), so at most one
worker across the deployment holds a live lease; a dead worker's lease simply expires."""
from __future__ import annotations

import os

from django.db import IntegrityError, transaction
from django.db.models import Q

from agentserver.clock import now_ms
from sessions_app.models import Session, SessionLease
from sessions_app.runtime.message_queue import IDLE

LEASE_MS = int(os.environ.get("AGENTSERVER_LEASE_MS", "10000"))


def acquire(session_id: str, holder: str) -> bool:
    """Take the lease if it is free, expired or already ours."""
    now = now_ms()
    with transaction.atomic():
        taken = (SessionLease.objects.filter(session_id=session_id)
                 .filter(Q(holder=holder) | Q(holder="") | Q(expires_at__lt=now))
                 .update(holder=holder, expires_at=now + LEASE_MS, updated=now))
        if taken:
            return True
        if SessionLease.objects.filter(session_id=session_id).exists():
            return False
        if not Session.objects.filter(id=session_id).exists():
            return False
    try:
        with transaction.atomic():
            SessionLease.objects.create(session_id=session_id, holder=holder, expires_at=now + LEASE_MS,
                                        status=IDLE, updated=now)
        return True
    except IntegrityError:
        return False


def renew(session_id: str, holder: str) -> bool:
    now = now_ms()
    with transaction.atomic():
        return bool(SessionLease.objects.filter(session_id=session_id, holder=holder)
                    .update(expires_at=now + LEASE_MS, updated=now))


def set_status(session_id: str, holder: str, status: dict) -> None:
    with transaction.atomic():
        SessionLease.objects.filter(session_id=session_id, holder=holder).update(status=status, updated=now_ms())


def release(session_id: str, holder: str) -> bool:
    with transaction.atomic():
        return bool(SessionLease.objects.filter(session_id=session_id, holder=holder)
                    .update(holder="", expires_at=0, status=IDLE, updated=now_ms()))


def is_live(session_id: str) -> bool:
    return SessionLease.objects.filter(session_id=session_id, expires_at__gt=now_ms()).exclude(holder="").exists()


def dead_sessions(limit: int = 100) -> list[str]:
    """Sessions whose runner died: the lease is held by someone but has expired."""
    return list(SessionLease.objects.filter(expires_at__lt=now_ms()).exclude(holder="")
                .values_list("session_id", flat=True)[:limit])
