"""The session lease: one row per session saying which worker runs its agent loop, until when, and in what
status. Acquiring is one conditional UPDATE (or an INSERT that loses on the primary key), so at most one
worker across the deployment holds a live lease; a dead worker's lease simply expires.

Also the queue: the stored user messages the runner has yet to answer, and the clean-up of assistant
messages a dead runner left open."""
from __future__ import annotations

import os

from django.db import IntegrityError, transaction
from django.db.models import Q

from projects_app.models import now_ms
from sessions_app.models import Message, Part, Session, SessionLease

LEASE_MS = int(os.environ.get("AGENTSERVER_LEASE_MS", "10000"))
IDLE = {"type": "idle"}
BUSY = {"type": "busy"}
# A user message stored with noReply is context, never answered. (Private key: see the report / wire.py.)
NO_REPLY_KEY = "_noReply"
ABORTED = {"name": "MessageAbortedError", "data": {"message": "Aborted"}}


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


# ---- the queue ------------------------------------------------------------------------------------

def last_answered_user_id(session_id: str) -> str:
    info = (Message.objects.filter(session_id=session_id, role="assistant").order_by("-id")
            .values_list("info", flat=True).first())
    return (info or {}).get("parentID") or ""


def next_pending(session_id: str) -> Message | None:
    """The oldest user message newer than the last answered one, skipping noReply notes. Answers are
    given in order, so nothing older can be waiting."""
    after = last_answered_user_id(session_id)
    for message in Message.objects.filter(session_id=session_id, role="user", id__gt=after).order_by("id"):
        if not message.info.get(NO_REPLY_KEY):
            return message
    return None


def pending_all(session_id: str) -> list[Message]:
    after = last_answered_user_id(session_id)
    return [m for m in Message.objects.filter(session_id=session_id, role="user", id__gt=after).order_by("id")
            if not m.info.get(NO_REPLY_KEY)]


def open_assistant_messages(session_id: str) -> list[Message]:
    return list(Message.objects.filter(session_id=session_id, role="assistant",
                                       info__time__completed__isnull=True).order_by("id"))


def close_part(data: dict, now: int) -> dict | None:
    """The finished form of a part a dead or aborted step left streaming; None if it needs nothing."""
    kind = data.get("type")
    if kind in ("text", "reasoning"):
        time = dict(data.get("time") or {})
        if "end" in time:
            return None
        time.setdefault("start", now)
        time["end"] = now
        return {**data, "time": time}
    if kind == "tool":
        state = data.get("state") or {}
        if state.get("status") in ("pending", "running"):
            start = (state.get("time") or {}).get("start", now)
            return {**data, "state": {"status": "error", "input": state.get("input") or {},
                                      "error": "Tool execution aborted", "metadata": state.get("metadata") or {},
                                      "time": {"start": start, "end": now}}}
    return None


def dangling_parts(message_id: str) -> list[Part]:
    return list(Part.objects.filter(message_id=message_id).order_by("id"))
