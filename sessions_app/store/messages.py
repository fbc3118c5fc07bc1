"""Writes of messages and parts (what the agent runner calls), each publishing its event.

Records are stored whole, as the wire shapes; `sessionID` is forced to the owning session so a caller
can never file a record under another session."""
from __future__ import annotations

from django.db import IntegrityError, connection, transaction

from agentserver import ids
from agentserver.db import sql
from agentserver.errors import BadRequest, NotFound
from agentserver.events import publisher as events
from projects_app.models import now_ms
from sessions_app.models import Message, Part, Session
from sessions_app.store.rows import (
    message_session,
    newest_message_id,
    part_message,
    session_reload,
)
from sessions_app.wire import public_info, session_event


def new_message_id(session: Session) -> str:
    """An id for a new message of the session that sorts after its newest one, whichever host (and clock)
    made that: the runner answers in id order, and a prompt that sorted before the answer it follows would
    never be answered."""
    return ids.ascending_after("msg", newest_message_id(session.id))


def publish_for(session: Session, type: str, properties: dict) -> None:
    """Events of a session go to its owner, tagged with the context the session is pinned to."""
    events.publish(type, properties, owner_id=session.owner_id, directory=session.directory,
                   workspace_id=session.workspace_id, project_id=session.project_id)


def check_new_message_id(*, session: Session, message_id: str | None) -> None:
    """A client-chosen id for a new message must be new and sort after every message of the session:
    the runner answers the queue in id order, and a waiting prompt looks for its answer after it. 400
    naming the field otherwise; call before storing anything."""
    if not message_id:
        return
    if Message.objects.filter(id=message_id).exists():
        raise BadRequest(f"Message already exists: {message_id}", kind="Body",
                         issues=[{"path": ["messageID"], "message": "already exists"}])
    last = Message.objects.filter(session=session).order_by("-id").values_list("id", flat=True).first()
    if last is not None and message_id <= last:
        raise BadRequest(f"messageID {message_id} must sort after the session's last message {last}", kind="Body",
                         issues=[{"path": ["messageID"], "message": f"must sort after {last}"}])


def message_save(*, session: Session, info: dict, new: bool = False) -> Message:
    """Store a message's info whole. `new`: the caller made its id just now (the runner opening an assistant
    message), so it is inserted straight away."""
    message_id = info.get("id") if isinstance(info, dict) else None
    if not isinstance(message_id, str) or not message_id.startswith("msg"):
        raise BadRequest("message info needs an id starting with 'msg'")
    role = info.get("role")
    if role not in ("user", "assistant"):
        raise BadRequest("message role must be 'user' or 'assistant'")
    info = {**info, "sessionID": session.id}
    created = (info.get("time") or {}).get("created") or now_ms()

    def may_insert() -> None:
        if message_session(message_id) is not None:
            raise BadRequest(f"Message {message_id} belongs to another session")

    _write(Message, key={"id": message_id, "session": session}, values={"role": role, "info": info},
           on_insert={"time_created": created}, new=new, may_insert=may_insert)
    publish_for(session, "message.updated", {"sessionID": session.id, "info": public_info(info)})
    return Message(id=message_id, session=session, role=role, info=info, time_created=created)


def part_save(*, session: Session, part: dict, new: bool = False) -> Part:
    """Store a part whole. `new`: the caller made its id just now (a part the runner starts), so it is
    inserted straight away; the message it names must be the session's."""
    part_id = part.get("id") if isinstance(part, dict) else None
    if not isinstance(part_id, str) or not part_id.startswith("prt"):
        raise BadRequest("part needs an id starting with 'prt'")
    message_id = part.get("messageID")
    part_type = part.get("type")
    if not isinstance(message_id, str) or not isinstance(part_type, str):
        raise BadRequest("part needs messageID and type")
    part = {**part, "sessionID": session.id}

    def may_insert() -> None:
        if message_session(message_id) != session.id:
            raise NotFound(f"Message not found: {message_id}")
        if part_message(part_id) is not None:
            raise BadRequest(f"Part {part_id} belongs to another message")

    _write(Part, key={"id": part_id, "session": session, "message_id": message_id},
           values={"type": part_type, "data": part}, new=new, may_insert=may_insert)
    publish_for(session, "message.part.updated", {"sessionID": session.id, "part": part, "time": now_ms()})
    return Part(id=part_id, message_id=message_id, session=session, type=part_type, data=part)


def _write(model, *, key: dict, values: dict, new: bool, may_insert, on_insert: dict | None = None) -> None:
    """Store the record `key` names with `values`. The runner saves a message several times and a part twice
    or more, so the common cases are one statement each: the insert of a record whose id the caller just
    made (`new`), the update of one that exists. Only when neither applies are the checks (`may_insert`,
    which raises) and the insert done, in one transaction."""
    fields = {**key, **values, **(on_insert or {})}
    if new and not connection.in_atomic_block:  # inside a transaction a failed insert would spoil it
        try:
            sql.insert(model, [model(**fields)])
            return
        except IntegrityError:
            pass  # the id exists after all (a re-run call's part), or its message is gone: the checked path
    if sql.update(model, key, values):
        return
    with transaction.atomic():
        if not sql.update(model, key, values):
            may_insert()
            sql.insert(model, [model(**fields)])


def part_checkpoint(*, session: Session, part: dict) -> None:
    """A streaming part's data so far, without an event: clients got its deltas; this is for a crash."""
    sql.update(Part, {"id": part["id"], "session": session}, {"data": {**part, "sessionID": session.id}})


def message_remove(*, session: Session, message_id: str) -> bool:
    with transaction.atomic():
        deleted, _ = Message.objects.filter(session=session, id=message_id).delete()
    if deleted:
        publish_for(session, "message.removed", {"sessionID": session.id, "messageID": message_id})
    return bool(deleted)


def part_remove(*, session: Session, message_id: str, part_id: str) -> bool:
    with transaction.atomic():
        deleted, _ = Part.objects.filter(session=session, message_id=message_id, id=part_id).delete()
    if deleted:
        publish_for(session, "message.part.removed",
                    {"sessionID": session.id, "messageID": message_id, "partID": part_id})
    return bool(deleted)


def session_touch(*, session: Session) -> Session:
    """Bump time.updated alone, so a concurrent change of other fields is never overwritten."""
    sql.update(Session, {"id": session.pk}, {"time_updated": now_ms()})
    session_reload(session)
    publish_for(session, "session.updated", session_event(session))
    return session
