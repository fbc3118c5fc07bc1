"""The session lease: one row per session saying which worker runs its agent loop, until when, and in what
status. Acquiring is one conditional UPDATE (or an INSERT that loses on the primary key), so at most one
worker across the deployment holds a live lease; a dead worker's lease simply expires. Every expiry is
computed and compared by the database's clock (agentserver.clock.DatabaseNow), never a host's."""
from __future__ import annotations

import os

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q

from agentserver import ids
from agentserver.clock import DatabaseNow
from agentserver.db import sql
from sessions_app.models import Message, Session, SessionLease
from sessions_app.runtime.message_queue import IDLE, NO_REPLY_KEY

LEASE_MS = int(os.environ.get("AGENTSERVER_LEASE_MS", "10000"))


def _until():
    return DatabaseNow() + LEASE_MS


def live() -> Q:
    """Leases someone holds and the database's clock says have not expired."""
    return Q(expires_at__gt=DatabaseNow()) & ~Q(holder="")


def acquire(session_id: str, holder: str) -> bool:
    """Take the lease if it is free, expired or already ours (expiry by the database's clock)."""
    if _take(session_id, holder):  # one statement: the row exists after the session's first run
        return True
    with transaction.atomic():  # no row yet, or a row someone else holds: decide under one transaction
        if _take(session_id, holder):
            return True
        if SessionLease.objects.filter(session_id=session_id).exists():
            return False
        if not Session.objects.filter(id=session_id).exists():
            return False
    try:
        with transaction.atomic():
            SessionLease.objects.create(session_id=session_id, holder=holder, expires_at=_until(),
                                        status=IDLE, updated=DatabaseNow())
        return True
    except IntegrityError:
        return False


# The runner's lease writes, several a prompt: compiled once (agentserver.db.sql.Change).
_TAKE = sql.Change(
    lambda session_id, holder: (
        SessionLease.objects.filter(session_id=session_id)
        .filter(Q(holder=holder) | Q(holder="") | Q(expires_at__lt=DatabaseNow())),
        {"holder": holder, "expires_at": _until(), "updated": DatabaseNow()}))
_RENEW = sql.Change(
    lambda session_id, holder: (SessionLease.objects.filter(session_id=session_id, holder=holder),
                                {"expires_at": _until(), "updated": DatabaseNow()}))
_SET_STATUS = sql.Change(
    lambda session_id, holder, status: (SessionLease.objects.filter(session_id=session_id, holder=holder),
                                        {"status": status, "updated": DatabaseNow()}))
_RELEASE = sql.Change(
    lambda session_id, holder: (SessionLease.objects.filter(session_id=session_id, holder=holder),
                                {"holder": "", "expires_at": 0, "status": IDLE, "updated": DatabaseNow()}))


def _take(session_id: str, holder: str) -> bool:
    return bool(_TAKE(session_id, holder))


def renew(session_id: str, holder: str) -> bool:
    """False when the lease is no longer ours (it expired and another worker took it): stop working on it."""
    return bool(_RENEW(session_id, holder))


def set_status(session_id: str, holder: str, status: dict) -> None:
    _SET_STATUS(session_id, holder, status)


def release(session_id: str, holder: str) -> bool:
    return bool(_RELEASE(session_id, holder))


def hand_over(session_id: str, holder: str) -> bool:
    """Let the lease expire now but keep it held: every worker's janitor sees a session whose runner is gone
    (dead_sessions) and one of them adopts it and answers what is queued. A stopping worker's way out; a
    lease it released meanwhile is taken back to be handed over, one another worker took is left alone."""
    return bool(SessionLease.objects.filter(Q(holder=holder) | Q(holder=""), session_id=session_id)
                .update(holder=holder, expires_at=0))


# Asked by every waiting request at each wake-up: compiled once (agentserver.db.sql.Query).
_LIVE = sql.Query(lambda session_id: (SessionLease.objects.filter(live(), session_id=session_id)
                                      .values_list("session_id", flat=True)[:1]))


def is_live(session_id: str) -> bool:
    return _LIVE.first(session_id) is not None


def live_sessions(session_ids: list[str]) -> list[str]:
    return list(SessionLease.objects.filter(live(), session_id__in=session_ids)
                .values_list("session_id", flat=True))


def stranded_sessions(*, since_ms: int, until_ms: int, limit: int = 100) -> list[str]:
    """Sessions with a prompt stored between the two times (by the ids' clock) that no assistant message
    follows and no live lease answers: the host that stored it died before its runner took the lease (after
    a 204 from prompt_async too), and nobody prompts the session again to start one. The runner that
    adopts one answers exactly what its queue holds (runtime/message_queue.py)."""
    low, high = ids.ascending_floor("msg", since_ms), ids.ascending_floor("msg", until_ms)
    window = Q(id__gte=low, id__lt=high) if low < high else Q(id__gte=low) | Q(id__lt=high)
    answered = Message.objects.filter(session_id=OuterRef("session_id"), role="assistant", id__gt=OuterRef("id"))
    held = SessionLease.objects.filter(live(), session_id=OuterRef("session_id"))
    return list(Message.objects.filter(window, role="user").exclude(info__has_key=NO_REPLY_KEY)
                .filter(~Exists(answered), ~Exists(held))
                .values_list("session_id", flat=True).distinct()[:limit])


def dead_sessions(limit: int = 100) -> list[str]:
    """Sessions whose runner died: the lease is held by someone but has expired."""
    return list(SessionLease.objects.filter(expires_at__lt=DatabaseNow()).exclude(holder="")
                .values_list("session_id", flat=True)[:limit])
