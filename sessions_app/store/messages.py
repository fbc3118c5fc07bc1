"""Messages and parts: their writes (what the agent runner calls), each publishing its event, and the reads
of a session's messages and parts the runtime and the services ask (the single-row reads by key are
store/rows.py's).

Records are stored whole, as the wire shapes; `sessionID` is forced to the owning session so a caller
can never file a record under another session."""
from __future__ import annotations

from collections.abc import Collection

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

# A user message stored with noReply is context, never answered. Private key: wire.py drops "_" keys.
NO_REPLY_KEY = "_noReply"


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


# ---- reads ----------------------------------------------------------------------------------------------

# Read by the runner before and after every turn and by every waiting request at each wake-up: compiled once
# (agentserver.db.sql.Query).


def _prompts_after_query(session_id: str, after: str):
    return (Message.objects.filter(session_id=session_id, role="user", id__gt=after)
            .exclude(info__has_key=NO_REPLY_KEY).order_by("id"))


_PROMPTS_AFTER = sql.Query(_prompts_after_query)
_FIRST_PROMPT_AFTER = sql.Query(lambda session_id, after: _prompts_after_query(session_id, after)[:1])


def prompts_after(session_id: str, after: str) -> list[Message]:
    """The session's user messages after the id `after`, oldest first, noReply notes left out."""
    return _PROMPTS_AFTER.all(session_id, after)


def first_prompt_after(session_id: str, after: str) -> Message | None:
    return _FIRST_PROMPT_AFTER.first(session_id, after)


_USER_INFOS_AFTER = sql.Query(
    lambda session_id, after: (Message.objects.filter(session_id=session_id, role="user", id__gt=after)
                               .order_by("id").values_list("id", "info")))


def user_infos_after(session_id: str, after: str) -> list[tuple[str, dict]]:
    """(id, info) of the session's user messages after the id `after`, oldest first."""
    return _USER_INFOS_AFTER.all(session_id, after)


def message_of(session_id: str, message_id: str | None) -> Message | None:
    """The session's message of that id, of either role."""
    return Message.objects.filter(session_id=session_id, id=message_id).first()


def message_exists(session_id: str, message_id: str) -> bool:
    return Message.objects.filter(session_id=session_id, id=message_id).exists()


def user_message(session_id: str, message_id: str | None) -> Message | None:
    """The session's user message of that id."""
    return Message.objects.filter(id=message_id, session_id=session_id, role="user").first()


def newest_message(session_id: str) -> Message | None:
    return Message.objects.filter(session_id=session_id).order_by("-id").first()


def latest_user_info(session_id: str, *, ignoring: Collection[str] = ()) -> dict | None:
    """The info of the session's newest user message, not one of `ignoring`."""
    users = Message.objects.filter(session_id=session_id, role="user")
    if ignoring:
        users = users.exclude(id__in=list(ignoring))
    return users.order_by("-id").values_list("info", flat=True).first()


def latest_answer_to(session_id: str, user_message_id: str) -> Message | None:
    """The newest assistant message whose parent is `user_message_id`."""
    return (Message.objects.filter(session_id=session_id, role="assistant", info__parentID=user_message_id)
            .order_by("-id").first())


def answer_ids(session_id: str, user_message_id: str) -> list[str]:
    """The ids of the assistant messages answering `user_message_id`."""
    return list(Message.objects.filter(session_id=session_id, role="assistant", info__parentID=user_message_id)
                .values_list("id", flat=True))


# A runner asks both at every turn's start (resume.recover, the title's check): compiled once.
_UNFINISHED_ANSWERS = sql.Query(lambda session_id: Message.objects.filter(
    session_id=session_id, role="assistant", info__time__completed__isnull=True).order_by("id"))
_FIRST_USER_MESSAGES = sql.Query(
    lambda session_id, limit: Message.objects.filter(session_id=session_id, role="user").order_by("id")[:limit])
_PARTS_OF_MESSAGES = sql.Query(
    lambda message_ids: Part.objects.filter(message_id__in=message_ids).order_by("message_id", "id"))


def unfinished_answers(session_id: str) -> list[Message]:
    """The session's assistant messages not completed, oldest first."""
    return _UNFINISHED_ANSWERS.all(session_id)


def user_messages_with_parts(session_id: str, *, limit: int) -> list[tuple[Message, list[Part]]]:
    """The session's first `limit` user messages, oldest first, each with its parts in order."""
    messages = _FIRST_USER_MESSAGES.all(session_id, limit)
    by_message: dict[str, list[Part]] = {message.id: [] for message in messages}
    for part in _PARTS_OF_MESSAGES.all([message.id for message in messages]):
        by_message[part.message_id].append(part)
    return [(message, by_message[message.id]) for message in messages]


def ids_and_roles(session_id: str) -> list[tuple[str, str]]:
    """(id, role) of every message of the session, oldest first."""
    return list(Message.objects.filter(session_id=session_id).order_by("id").values_list("id", "role"))


def newest_first_infos(session_id: str) -> list[tuple[str, str, dict]]:
    """(id, role, info) of every message of the session, newest first."""
    return list(Message.objects.filter(session_id=session_id).order_by("-id").values_list("id", "role", "info"))


def message_ids_from(session_id: str, message_id: str, *, including: bool) -> list[str]:
    """The ids of the session's messages after `message_id` (and it, `including`), oldest first."""
    after = {"id__gte" if including else "id__gt": message_id}
    return list(Message.objects.filter(session_id=session_id, **after).order_by("id").values_list("id", flat=True))


def part_of(session_id: str, message_id: str, part_id: str) -> Part | None:
    return Part.objects.filter(session_id=session_id, message_id=message_id, id=part_id).first()


def part_ids_from(session_id: str, message_id: str, part_id: str) -> list[str]:
    """The ids of the message's parts from `part_id` on, in order."""
    return list(Part.objects.filter(session_id=session_id, message_id=message_id, id__gte=part_id)
                .order_by("id").values_list("id", flat=True))


def part_data_by_message(session_id: str) -> list[tuple[str, dict]]:
    """(message id, part data) of every part of the session, by message then part."""
    return list(Part.objects.filter(session_id=session_id).order_by("message_id", "id")
                .values_list("message_id", "data"))


def parts_of_type(message_id: str, type: str) -> list[Part]:
    """The message's parts of one type, in order."""
    return list(Part.objects.filter(message_id=message_id, type=type).order_by("id"))


_SUBTASKS = sql.Query(
    lambda message_id: Part.objects.filter(message_id=message_id, type="subtask").order_by("id")
    .values_list("data", flat=True))
_COMPACTION_PART = sql.Query(
    lambda message_id: Part.objects.filter(message_id=message_id, type="compaction").order_by("id")
    .values_list("data", flat=True)[:1])


def subtasks_of(message_id: str) -> list[dict]:
    """The data of the message's `subtask` parts, in order."""
    return _SUBTASKS.all(message_id)


def compaction_part_of(message_id: str) -> dict | None:
    """The data of the message's first `compaction` part."""
    return _COMPACTION_PART.first(message_id)


def tool_parts_up_to(session_id: str, message_id: str) -> list[Part]:
    """The session's tool parts of the messages up to `message_id`, in order."""
    return list(Part.objects.filter(session_id=session_id, type="tool", message_id__lte=message_id).order_by("id"))


def completed_tool_data(session_id: str, *, tools: Collection[str], limit: int) -> list[dict]:
    """The data of the session's newest `limit` completed calls of these tools, newest first."""
    return list(Part.objects.filter(session_id=session_id, type="tool", data__tool__in=tools,
                                    data__state__status="completed")
                .order_by("-id").values_list("data", flat=True)[:limit])


def turn_snapshots(session_id: str, message_ids: list[str]) -> tuple[str | None, str | None]:
    """The first `step-start` and the last `step-finish` snapshot among these messages' parts."""
    parts = Part.objects.filter(session_id=session_id, message_id__in=message_ids)
    start = parts.filter(type="step-start", data__has_key="snapshot").order_by("message_id", "id").first()
    end = parts.filter(type="step-finish", data__has_key="snapshot").order_by("-message_id", "-id").first()
    return (start.data.get("snapshot") if start else None), (end.data.get("snapshot") if end else None)


def _snapshot_bound(kind: str, *order: str) -> sql.Query:
    return sql.Query(
        lambda session_id: (Part.objects.filter(session_id=session_id, type=kind, data__has_key="snapshot")
                            .order_by(*order).values_list("data", flat=True)[:1]))


# The session's first and last snapshot, read after every step (summarize): compiled once.
_FIRST_SNAPSHOT = _snapshot_bound("step-start", "message_id", "id")
_LAST_SNAPSHOT = _snapshot_bound("step-finish", "-message_id", "-id")


def first_snapshot_step(session_id: str) -> dict | None:
    """The data of the session's first `step-start` part with a snapshot."""
    return _FIRST_SNAPSHOT.first(session_id)


def last_snapshot_step(session_id: str) -> dict | None:
    """The data of the session's last `step-finish` part with a snapshot."""
    return _LAST_SNAPSHOT.first(session_id)
