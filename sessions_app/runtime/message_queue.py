"""The queue of a session's user messages: the stored ones its runner has yet to answer (answered in
order, so nothing older than the oldest pending one can be waiting), and the statuses the session shows."""
from __future__ import annotations

from agentserver import ids
from agentserver.db import sql
from sessions_app.models import Message
from sessions_app.store.rows import latest_assistant, newest_message_id

IDLE = {"type": "idle"}
BUSY = {"type": "busy"}
# A user message stored with noReply is context, never answered. Private key: wire.py drops "_" keys.
NO_REPLY_KEY = "_noReply"


# Read by the runner before and after every turn and by every waiting request at each wake-up: compiled once
# (agentserver.db.sql.Query).


def _prompts_after_query(session_id: str, after: str):
    return (Message.objects.filter(session_id=session_id, role="user", id__gt=after)
            .exclude(info__has_key=NO_REPLY_KEY).order_by("id"))


_PROMPTS_AFTER = sql.Query(_prompts_after_query)
_FIRST_PROMPT_AFTER = sql.Query(lambda session_id, after: _prompts_after_query(session_id, after)[:1])


def last_answered_user_id(session_id: str) -> str:
    last = latest_assistant(session_id)
    return ((last.info or {}) if last is not None else {}).get("parentID") or ""


def pending_all(session_id: str) -> list[Message]:
    """Every user message newer than the last answered one, oldest first, noReply notes left out."""
    return _PROMPTS_AFTER.all(session_id, last_answered_user_id(session_id))


def next_pending(session_id: str) -> Message | None:
    """Also makes the answer's ids sort after the session's newest message (agentserver.ids.observe): it may
    come from a host whose clock is ahead of this one's."""
    ids.observe(newest_message_id(session_id))
    return _FIRST_PROMPT_AFTER.first(session_id, last_answered_user_id(session_id))


def queued_after(session_id: str, user_message_id: str) -> bool:
    """Whether a prompt waits behind `user_message_id`, for a request asking after every wake-up whether the
    runner stays on the session."""
    return _FIRST_PROMPT_AFTER.first(session_id, user_message_id) is not None
