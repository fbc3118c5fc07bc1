"""The queue of a session's user messages: the stored ones its runner has yet to answer (answered in
order, so nothing older than the oldest pending one can be waiting), and the statuses the session shows."""
from __future__ import annotations

from agentserver import ids
from sessions_app.models import Message

IDLE = {"type": "idle"}
BUSY = {"type": "busy"}
# A user message stored with noReply is context, never answered. Private key: wire.py drops "_" keys.
NO_REPLY_KEY = "_noReply"


def last_answered_user_id(session_id: str) -> str:
    info = (Message.objects.filter(session_id=session_id, role="assistant").order_by("-id")
            .values_list("info", flat=True).first())
    return (info or {}).get("parentID") or ""


def _prompts_after(session_id: str, user_message_id: str):
    """The user messages after `user_message_id` that want an answer (noReply notes left out), oldest first."""
    return (Message.objects.filter(session_id=session_id, role="user", id__gt=user_message_id)
            .exclude(info__has_key=NO_REPLY_KEY).order_by("id"))


def pending_all(session_id: str) -> list[Message]:
    """Every user message newer than the last answered one, oldest first, noReply notes left out."""
    return list(_prompts_after(session_id, last_answered_user_id(session_id)))


def next_pending(session_id: str) -> Message | None:
    """Also makes the answer's ids sort after the session's newest message (agentserver.ids.observe): it may
    come from a host whose clock is ahead of this one's."""
    ids.observe(Message.objects.filter(session_id=session_id).order_by("-id").values_list("id", flat=True).first())
    return _prompts_after(session_id, last_answered_user_id(session_id)).first()


def queued_after(session_id: str, user_message_id: str) -> bool:
    """Whether a prompt waits behind `user_message_id`: one query, for a request asking after every wake-up
    whether the runner stays on the session."""
    return _prompts_after(session_id, user_message_id).exists()
