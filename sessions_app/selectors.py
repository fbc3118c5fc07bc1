"""Reads, always scoped to the caller: another user's session is indistinguishable from a missing one."""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from django.db import connection

from agentserver.clock import DatabaseNow
from agentserver.db import json_column, sql
from agentserver.errors import BadRequest, NotFound
from sessions_app.models import Message, Part, Session, SessionLease, Share, Todo

LIST_DEFAULT_LIMIT = 100
LIST_MAX_LIMIT = 1000
MESSAGES_MAX_LIMIT = 10_000


def session_get(*, user, session_id: str) -> Session:
    found = _sessions_with_shares("s.owner_id = %s AND s.id = %s", [user.pk, session_id], "", []) \
        if isinstance(session_id, str) else []
    if not found:
        raise NotFound(f"Session not found: {session_id}")
    return found[0]


def session_list(*, user, project_id: str | None = None, path: str | None = None, roots: bool = False,
                 start: int | None = None, search: str | None = None, limit: int | None = None,
                 directory: str | None = None, workspace_id: str | None = None, archived: bool | None = None,
                 order: str = "desc", cursor: tuple[int, str] | None = None) -> list[Session | SessionRow]:
    """For rendering (session_wire): most recently updated first (or oldest first with order="asc");
    `cursor` = (time_updated, id) of the last item of the previous page, so pages never repeat or skip."""
    limit = LIST_DEFAULT_LIMIT if limit is None else max(1, min(limit, LIST_MAX_LIMIT))
    if not (path and path.strip("/")) and not search and cursor is None:
        return _session_list_plain(
            user_id=user.pk, project_id=project_id, directory=directory, workspace_id=workspace_id, roots=roots,
            start=start, archived=archived, order=order, limit=limit)
    qs = Session.objects.filter(owner=user)
    if project_id is not None:
        qs = qs.filter(project_id=project_id)
    if directory is not None:
        qs = qs.filter(directory=directory)
    if workspace_id is not None:
        qs = qs.filter(workspace_id=workspace_id)
    if path:
        path = path.strip("/")
        if path:
            from django.db.models import Q

            qs = qs.filter(Q(path=path) | Q(path__startswith=path + "/"))
    if roots:
        qs = qs.filter(parent_id__isnull=True)
    if start is not None:
        qs = qs.filter(time_updated__gte=start)
    if search:
        qs = qs.filter(title__icontains=search)
    if archived is False:
        qs = qs.filter(time_archived__isnull=True)
    if cursor is not None:
        from django.db.models import Q

        updated, last_id = cursor
        if order == "asc":
            qs = qs.filter(Q(time_updated__gt=updated) | Q(time_updated=updated, id__gt=last_id))
        else:
            qs = qs.filter(Q(time_updated__lt=updated) | Q(time_updated=updated, id__lt=last_id))
    ordering = ("time_updated", "id") if order == "asc" else ("-time_updated", "-id")
    return list(qs.select_related("share").order_by(*ordering)[:limit])


def _session_list_plain(*, user_id: int, project_id, directory, workspace_id, roots: bool, start, archived,
                        order: str, limit: int) -> list[SessionRow]:
    """The listing every client polls, written in SQL with its shares joined: the ORM compiled this query
    anew on every request, which cost more than running it (and a join doubled that). Only equality, NULL
    and range tests, which read the same on every backend; the rarer filters (path prefix, title search,
    cursor) go through the ORM above."""
    where, params = ["s.owner_id = %s"], [user_id]
    for column, value in (("project_id", project_id), ("directory", directory), ("workspace_id", workspace_id)):
        if value is not None:
            where.append(f"s.{column} = %s")
            params.append(value)
    if roots:
        where.append("s.parent_id IS NULL")
    if start is not None:
        where.append("s.time_updated >= %s")
        params.append(start)
    if archived is False:
        where.append("s.time_archived IS NULL")
    direction = "ASC" if order == "asc" else "DESC"
    sql = (f"SELECT {_SESSION_COLUMNS}, sh.url FROM {_SESSIONS_AND_SHARES} WHERE {' AND '.join(where)} "
           f"ORDER BY s.time_updated {direction}, s.id {direction} LIMIT %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit])
        return [SessionRow(row) for row in cursor.fetchall()]


_ROW_FIELDS = tuple(field.attname for field in Session._meta.concrete_fields)
_JSON_FIELDS = frozenset(field.attname for field in Session._meta.concrete_fields if isinstance(field, json_column.JSONField))


class SessionRow:
    """A listed session as read, for rendering only: the attributes of a Session, and `share` (None or an
    object with the share's url). Making ten model instances (their converters, __init__ and signals) was a
    third of a GET /session."""
    __slots__ = (*_ROW_FIELDS, "share")

    def __init__(self, row: tuple):
        for name, value in zip(_ROW_FIELDS, row):
            setattr(self, name, _json_value(value) if name in _JSON_FIELDS else value)
        url = row[len(_ROW_FIELDS)]
        self.share = None if url is None else ShareUrl(url)


@dataclass(frozen=True)
class ShareUrl:
    url: str


def _json_value(value):
    """What JSONField.from_db_value gives (the backends hand JSON over as text)."""
    return json_column.loads(value) if isinstance(value, (str, bytes)) else value


def _sessions_with_shares(where: str, params: list, tail: str, tail_params: list) -> list[Session]:
    """Sessions (alias s) matching `where`, each with its share (or none) cached as select_related would."""
    sql = f"SELECT {_SESSION_COLUMNS}, {_SHARE_COLUMNS} FROM {_SESSIONS_AND_SHARES} WHERE {where} {tail}"
    sessions = list(Session.objects.raw(sql, [*params, *tail_params]))
    cache = Session.share.related.set_cached_value
    for session in sessions:
        row = session.__dict__
        share = None
        if row["share__id"] is not None:
            share = Share.from_db(connection.alias, _SHARE_NAMES,
                                  [row["share__id"], session.id, *(row[f"share__{n}"] for n in _SHARE_NAMES[2:])])
        cache(session, share)
    return sessions


_SESSIONS_AND_SHARES = (f"{Session._meta.db_table} s LEFT JOIN {Share._meta.db_table} sh "
                        "ON sh.session_id = s.id")
_SESSION_COLUMNS = ", ".join(f"s.{field.column}" for field in Session._meta.concrete_fields)
_SHARE_NAMES = [field.attname for field in Share._meta.concrete_fields]  # id, session_id, slug, ...
_SHARE_COLUMNS = ", ".join(f"sh.{field.column} AS share__{field.attname}" for field in Share._meta.concrete_fields
                           if field.attname != "session_id")


def session_children(*, session: Session) -> list[Session]:
    return list(Session.objects.select_related("share").filter(owner_id=session.owner_id, parent_id=session.id)
                .order_by("-time_updated", "-id"))


def session_todos(*, session: Session) -> list[Todo]:
    return list(Todo.objects.filter(session=session).order_by("position"))


def capabilities() -> dict:
    """experimental.capabilities.get: subagents run inside their parent's turn here; there are no detached
    background subagents."""
    return {"backgroundSubagents": False}


def session_statuses(*, user) -> dict[str, dict]:
    """Non-idle sessions of the caller: live leases only (an expired lease is a dead worker, hence idle)."""
    rows = (SessionLease.objects.filter(session__owner=user, expires_at__gt=DatabaseNow())
            .values_list("session_id", "status"))
    return {session_id: status for session_id, status in rows if status and status.get("type", "idle") != "idle"}


# ---- messages -------------------------------------------------------------------------------------

def _cursor(message_id: str, time_created: int) -> str:
    raw = json.dumps({"id": message_id, "time": time_created}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(value: str) -> str:
    """A cursor is base64 JSON {"id","time"} (as opencode's); a bare message id is accepted too."""
    if value.startswith("msg_"):
        return value
    try:
        padded = value.replace("+", "-").replace("/", "_") + "=" * (-len(value) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        message_id = data["id"]
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise BadRequest(f"Invalid cursor: {value!r}", kind="Query")
    if not isinstance(message_id, str) or not message_id.startswith("msg_"):
        raise BadRequest(f"Invalid cursor: {value!r}", kind="Query")
    return message_id


@dataclass
class StoredMessagePage:
    items: list[dict]
    next_cursor: str | None
    last_id: str | None


def session_messages_stored(*, session: Session, limit: int | None = None, before: str | None = None,
                            after: str | None = None, order: str = "asc", tail: bool = True) -> StoredMessagePage:
    """A page of messages with their parts, as wire objects built from the JSON the database holds, never
    parsed (a long session's list was mostly json.loads, model instances and json.dumps of the same data).

    order="asc", tail=True (opencode's `GET /session/{id}/message?limit=N`): the newest `limit` messages
    before `before`, returned ascending; the next page then goes further back.
    order="asc", tail=False: the oldest `limit` after `after`; order="desc": newest first before `before`.
    `next_cursor` and `last_id` name the message the next page continues from."""
    from sessions_app.wire import message_wire_stored

    # In SQL: these two queries are every message list's, and the ORM compiled them anew on each call.
    where, params = ["session_id = %s"], [session.id]
    if before:
        where.append("id < %s")
        params.append(before)
    if after:
        where.append("id > %s")
        params.append(after)
    backwards = order == "desc" or tail
    bounded = limit is not None
    limit = max(1, min(limit, MESSAGES_MAX_LIMIT)) if bounded else None
    direction = "DESC" if (backwards if bounded else order == "desc") else "ASC"
    sql = (f"SELECT id, time_created, CAST(info AS TEXT) FROM {Message._meta.db_table} "
           f"WHERE {' AND '.join(where)} ORDER BY id {direction}" + (" LIMIT %s" if bounded else ""))
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit + 1] if bounded else params)
        rows = cursor.fetchall()
    last = None
    if bounded:
        more = len(rows) > limit
        rows = rows[:limit]
        last = rows[-1] if more and rows else None
        if order == "asc" and backwards:
            rows.reverse()
    parts: dict[str, list[str]] = {message_id: [] for message_id, _, _ in rows}
    if rows:
        # A page is a contiguous run of the session's ids: a range, not an IN list of every id.
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT message_id, CAST(data AS TEXT) FROM {Part._meta.db_table} WHERE session_id = %s "
                           "AND message_id >= %s AND message_id <= %s ORDER BY message_id, id",
                           [session.id, min(parts), max(parts)])
            for message_id, data in cursor.fetchall():
                parts[message_id].append(json_column.wire_text(data))
    return StoredMessagePage(
        [message_wire_stored(json_column.wire_text(info), parts[message_id]) for message_id, _, info in rows],
        _cursor(last[0], last[1]) if last is not None else None,
        last[0] if last is not None else None,
    )


def message_get(*, session: Session, message_id: str) -> tuple[Message, list[Part]]:
    message = Message.objects.filter(session=session, id=message_id).first()
    if message is None:
        raise NotFound(f"Message not found: {message_id}")
    return message, list(Part.objects.filter(message=message).order_by("id"))


def session_context_messages(*, session: Session) -> list[tuple[Message, list[dict]]]:
    """The messages from the last completed compaction on: the user message holding the compaction part that a
    summary (assistant, `summary: true`, completed without error) answered. With none, all of them. A
    compaction still pending (or failed) is no boundary: its summary needs the history before it."""
    boundary = None
    summary = (Message.objects.filter(session=session, role="assistant", info__summary=True)
               .order_by("-id").values_list("id", "info"))
    for message_id, info in summary:
        if (info.get("time") or {}).get("completed") and not info.get("error"):
            # The summary answers the user message that asked for it; the context starts there.
            parent = info.get("parentID")
            boundary = parent if isinstance(parent, str) and parent < message_id else message_id
            break
    since = boundary or ""  # every id sorts after ""
    messages = _MESSAGES_SINCE.all(session.id, since)
    by_message: dict[str, list[dict]] = {m.id: [] for m in messages}
    for message_id, data in _PARTS_SINCE.all(session.id, since):
        if message_id in by_message:
            by_message[message_id].append(data)
    return [(m, by_message[m.id]) for m in messages]


# The model's history, read before every step: compiled once (agentserver.db.sql.Query). The parts are those of
# the session's messages from `since` on, in one statement; values_list skips model instantiation.
_MESSAGES_SINCE = sql.Query(
    lambda session_id, since: Message.objects.filter(session_id=session_id, id__gte=since).order_by("id"))
_PARTS_SINCE = sql.Query(
    lambda session_id, since: (Part.objects.filter(session_id=session_id, message_id__gte=since)
                               .order_by("message_id", "id").values_list("message_id", "data")))


HISTORY_DEFAULT_LIMIT = 100
HISTORY_MAX_LIMIT = 1000


def durable_event_wire(row, session_id: str) -> dict:
    """A logged event of a session as v2's durable event: its log id is the session's sequence number."""
    return {"id": row.event_id, "type": row.type, "durable": {"aggregateID": session_id, "seq": row.id, "version": 1},
            "location": {"directory": row.directory, **({"workspaceID": row.workspace_id} if row.workspace_id else {})},
            "data": row.properties, "time": row.time}


def _about(session: Session):
    from django.db.models import Q

    return (Q(properties__sessionID=session.id) | Q(properties__info__sessionID=session.id)
            | Q(properties__part__sessionID=session.id) | Q(type__startswith="session.", properties__info__id=session.id))


def session_replay_after(*, session: Session, after: int) -> int:
    """Where a replay of the session's events after `after` starts in the log: just before its first retained
    event after `after`, or at the log's end when it has none."""
    from django.db.models import Max

    from agentserver.models import EventLog

    first = (EventLog.objects.filter(_about(session), owner_id=session.owner_id, directory=session.directory,
                                     id__gt=after).order_by("id").values_list("id", flat=True).first())
    if first is not None:
        return first - 1
    return EventLog.objects.aggregate(newest=Max("id"))["newest"] or after


def session_history(*, session: Session, after: int = 0, limit: int | None = None) -> tuple[list[dict], bool]:
    """v2 session.history: one page of the session's logged events after sequence `after`, oldest first, and
    whether more follow. Events older than the log's retention (AGENTSERVER_EVENT_LOG_RETENTION) are gone."""
    from agentserver.models import EventLog

    limit = max(1, min(limit or HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT))
    rows = list(EventLog.objects.filter(_about(session), owner_id=session.owner_id, directory=session.directory, id__gt=after)
                .order_by("id")[:limit + 1])
    return [durable_event_wire(row, session.id) for row in rows[:limit]], len(rows) > limit


def project_summaries(*, user, sessions) -> dict[str, dict]:
    """ProjectSummary ({id, name?, worktree}) of the projects of the caller's `sessions`: the project's record,
    or, for one no route has recorded yet, what its session knows (its directory less its sub-path)."""
    from projects_app.models import Project

    out = {}
    for session in sessions:
        worktree = session.directory
        if session.path and worktree.endswith("/" + session.path):
            worktree = worktree[:-len(session.path) - 1]
        out.setdefault(session.project_id, {"id": session.project_id, "worktree": worktree})
    for project in Project.objects.filter(owner=user, project_id__in=set(out)):
        summary = {"id": project.project_id, "worktree": project.worktree}
        if project.name:
            summary["name"] = project.name
        out[project.project_id] = summary
    return out


SYNC_HISTORY_LIMIT = 10_000


def sync_history(*, user, directory: str, known: dict[str, int]) -> list[dict]:
    """1.18's sync.history.list over the event log: the logged events of the caller's sessions in `directory`
    ({id, aggregate_id, seq, type, data}, seq = the log id), those after `known[sessionID]` for the sessions
    named there. At most SYNC_HISTORY_LIMIT events."""
    from agentserver.events.bus import event_session_id
    from agentserver.models import EventLog

    rows = EventLog.objects.filter(owner_id=user.pk, directory=directory).order_by("id")
    out = []
    for row in rows.iterator(chunk_size=1000):
        session_id = event_session_id(row.type, row.properties)
        if session_id is None or row.id <= known.get(session_id, -1):
            continue
        out.append({"id": row.event_id, "aggregate_id": session_id, "seq": row.id, "type": row.type,
                    "data": row.properties})
        if len(out) >= SYNC_HISTORY_LIMIT:
            break
    return out
