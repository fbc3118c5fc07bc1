"""The store's reads of single rows by key, for the agent loop's hot paths: compiled once per process
(agentserver.db.sql.Query) instead of on every call, which cost a fetched Session about ten times its run.
Unscoped: callers hold an id they already own (a runner's session, a record they just wrote)."""
from __future__ import annotations

from django.contrib.auth import get_user_model

from agentserver.db import sql
from sessions_app.models import Message, Part, Session, Share

_SESSION = sql.Query(lambda session_id: Session.objects.filter(id=session_id)[:1])
_USER = sql.Query(lambda user_id: get_user_model().objects.filter(id=user_id)[:1])
_LATEST_ASSISTANT = sql.Query(
    lambda session_id: Message.objects.filter(session_id=session_id, role="assistant").order_by("-id")[:1])
_NEWEST_MESSAGE_ID = sql.Query(
    lambda session_id: Message.objects.filter(session_id=session_id).order_by("-id").values_list("id", flat=True)[:1])
_MESSAGE_SESSION = sql.Query(
    lambda message_id: Message.objects.filter(id=message_id).values_list("session_id", flat=True)[:1])
_PART_MESSAGE = sql.Query(
    lambda part_id: Part.objects.filter(id=part_id).values_list("message_id", flat=True)[:1])
_PARTS = sql.Query(lambda message_id: Part.objects.filter(message_id=message_id).order_by("id"))
_SHARE = sql.Query(lambda session_id: Share.objects.filter(session_id=session_id)[:1])


def session_row(session_id: str) -> Session | None:
    return _SESSION.first(session_id)


def session_reload(session: Session) -> Session:
    """`session` with every field read again, in place, its share forgotten (refresh_from_db, compiled
    once); Session.DoesNotExist when it is gone."""
    fresh = _SESSION.first(session.pk)
    if fresh is None:
        raise Session.DoesNotExist(f"Session {session.pk} does not exist")
    for field in Session._meta.concrete_fields:
        setattr(session, field.attname, getattr(fresh, field.attname))
    if Session.share.related.is_cached(session):
        Session.share.related.delete_cached_value(session)
    return session


def share_of(session_id: str) -> Share | None:
    """The session's share, None when it is not shared."""
    return _SHARE.first(session_id)


def owner_of(session: Session):
    """The session's owner (its user row), read once per Session object."""
    field = Session._meta.get_field("owner")
    if not field.is_cached(session):
        field.set_cached_value(session, _USER.first(session.owner_id))
    return session.owner


def parts_of(message_id: str) -> list[Part]:
    """A message's parts in order."""
    return _PARTS.all(message_id)


def latest_assistant(session_id: str) -> Message | None:
    """The session's newest assistant message."""
    return _LATEST_ASSISTANT.first(session_id)


def newest_message_id(session_id: str) -> str | None:
    return _NEWEST_MESSAGE_ID.first(session_id)


def message_session(message_id: str) -> str | None:
    """The id of the session a message belongs to, None when there is no such message."""
    return _MESSAGE_SESSION.first(message_id)


def part_message(part_id: str) -> str | None:
    """The id of the message a part belongs to, None when there is no such part."""
    return _PART_MESSAGE.first(part_id)
