"""The queue of a session's user messages: the stored ones its runner has yet to answer (answered in
order, so nothing older than the oldest pending one can be waiting). The statuses a session shows are on its
lease row (store/leases.py)."""
from __future__ import annotations

from agentserver import ids
from sessions_app.models import Message
from sessions_app.store.messages import first_prompt_after, prompts_after
from sessions_app.store.rows import latest_assistant, newest_message_id


def last_answered_user_id(session_id: str) -> str:
    last = latest_assistant(session_id)
    return ((last.info or {}) if last is not None else {}).get("parentID") or ""


def pending_all(session_id: str) -> list[Message]:
    """Every user message newer than the last answered one, oldest first, noReply notes left out."""
    return prompts_after(session_id, last_answered_user_id(session_id))


def next_pending(session_id: str) -> Message | None:
    """Also makes the answer's ids sort after the session's newest message (agentserver.ids.observe): it may
    come from a host whose clock is ahead of this one's."""
    ids.observe(newest_message_id(session_id))
    return first_prompt_after(session_id, last_answered_user_id(session_id))


def queued_after(session_id: str, user_message_id: str) -> bool:
    """Whether a prompt waits behind `user_message_id`, for a request asking after every wake-up whether the
    runner stays on the session."""
    return first_prompt_after(session_id, user_message_id) is not None
