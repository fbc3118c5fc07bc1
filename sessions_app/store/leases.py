"""The session lease rows (SessionLease): taken, renewed, released and handed over by one statement each, every
expiry computed and compared by the database's clock (agentserver.clock.DatabaseNow), never a host's. The
use cases (who acquires, when to renew) are runtime/leases.py's; this is the only code that touches the rows."""
from __future__ import annotations

import os

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q

from agentserver.clock import DatabaseNow
from agentserver.db import sql
from sessions_app.models import Message, SessionLease
from sessions_app.store.messages import NO_REPLY_KEY

LEASE_MS = int(os.environ.get("AGENTSERVER_LEASE_MS", "10000"))

# The statuses a session shows, stored on its lease row: a free lease's is IDLE.
IDLE = {"type": "idle"}
BUSY = {"type": "busy"}


def _until():
    return DatabaseNow() + LEASE_MS


def live() -> Q:
    """Leases someone holds and the database's clock says have not expired."""
    return Q(expires_at__gt=DatabaseNow()) & ~Q(holder="")


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


def take_if_free(session_id: str, holder: str) -> bool:
    """Take the session's lease row when it is free, expired or already `holder`'s; False when there is no
    row or someone else holds it."""
    return bool(_TAKE(session_id, holder))


_ROW = sql.Query(lambda session_id: SessionLease.objects.filter(session_id=session_id)
                 .values_list("session_id", flat=True)[:1])


def row_exists(session_id: str) -> bool:
    return _ROW.first(session_id) is not None


def insert_held(session_id: str, holder: str) -> bool:
    """The session's first lease row, held by `holder`; False when another worker inserted it first."""
    try:
        with transaction.atomic():
            SessionLease.objects.create(session_id=session_id, holder=holder, expires_at=_until(),
                                        status=IDLE, updated=DatabaseNow())
        return True
    except IntegrityError:
        return False


def renew(session_id: str, holder: str) -> bool:
    return bool(_RENEW(session_id, holder))


def set_status(session_id: str, holder: str, status: dict) -> None:
    _SET_STATUS(session_id, holder, status)


def release(session_id: str, holder: str) -> bool:
    return bool(_RELEASE(session_id, holder))


def expire_held(session_id: str, holder: str) -> bool:
    """The lease expired now but still held by `holder` (taken back when it was free; left alone when another
    worker holds it)."""
    return bool(SessionLease.objects.filter(Q(holder=holder) | Q(holder=""), session_id=session_id)
                .update(holder=holder, expires_at=0))


# Asked by every waiting request at each wake-up: compiled once (agentserver.db.sql.Query).
_LIVE = sql.Query(lambda session_id: (SessionLease.objects.filter(live(), session_id=session_id)
                                      .values_list("session_id", flat=True)[:1]))


def is_live(session_id: str) -> bool:
    return _LIVE.first(session_id) is not None


_LIVE_AMONG = sql.Query(lambda session_ids: SessionLease.objects.filter(live(), session_id__in=session_ids)
                        .values_list("session_id", flat=True))


def live_among(session_ids: list[str]) -> list[str]:
    return _LIVE_AMONG.all(list(session_ids))


def unanswered_unheld(*, window: Q, limit: int) -> list[str]:
    """Sessions with a user message in `window` (a condition on its id), not a noReply note, that no
    assistant message follows and no live lease answers."""
    answered = Message.objects.filter(session_id=OuterRef("session_id"), role="assistant", id__gt=OuterRef("id"))
    held = SessionLease.objects.filter(live(), session_id=OuterRef("session_id"))
    return list(Message.objects.filter(window, role="user").exclude(info__has_key=NO_REPLY_KEY)
                .filter(~Exists(answered), ~Exists(held))
                .values_list("session_id", flat=True).distinct()[:limit])


def expired_but_held(limit: int) -> list[str]:
    """Sessions whose lease is held by someone but has expired."""
    return list(SessionLease.objects.filter(expires_at__lt=DatabaseNow()).exclude(holder="")
                .values_list("session_id", flat=True)[:limit])
