"""Wire rendering: the exact JSON shapes opencode's clients read (reference §3.2, §3.4, §3.5, §3.7)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

import orjson
from django.core.exceptions import ImproperlyConfigured

from sessions_app.models import Message, Part, Session, Share, Todo

# How a session's share is read when it is not at hand: the store's statement compiled once (store/rows.py's
# share_of), handed in by SessionsAppConfig.ready, the store being above this module.
_read_share: Callable[[str], Share | None] | None = None


def read_shares_with(reader: Callable[[str], Share | None]) -> None:
    """`reader(session_id) -> Share | None`."""
    global _read_share
    _read_share = reader


def _share_of(session: Session):
    """The session's share; list selectors read it beside the session (SessionRow, select_related), a
    session rendered again and again by the runner reads it with a statement compiled once."""
    if not isinstance(session, Session):
        return session.share
    relation = Session.share.related
    if not relation.is_cached(session):
        if _read_share is None:
            raise ImproperlyConfigured("no share reader: is sessions_app installed?")
        relation.set_cached_value(session, _read_share(session.pk))
    return relation.get_cached_value(session)


def session_wire(session: Session) -> dict:
    out: dict = {
        "id": session.id,
        "slug": session.slug,
        "projectID": session.project_id,
    }
    if session.workspace_id:
        out["workspaceID"] = session.workspace_id
    out["directory"] = session.directory
    out["path"] = session.path
    if session.parent_id:
        out["parentID"] = session.parent_id
    if session.summary is not None:
        out["summary"] = session.summary
    out["cost"] = session.cost
    out["tokens"] = session.tokens
    share = _share_of(session)
    if share is not None:
        out["share"] = {"url": share.url}
    out["title"] = session.title
    if session.agent:
        out["agent"] = session.agent
    if session.model:
        out["model"] = session.model
    out["version"] = session.version
    if session.metadata:
        out["metadata"] = session.metadata
    time: dict = {"created": session.time_created, "updated": session.time_updated}
    if session.time_compacting is not None:
        time["compacting"] = session.time_compacting
    if session.time_archived is not None:
        time["archived"] = session.time_archived
    out["time"] = time
    if session.permission:
        out["permission"] = session.permission
    if session.revert is not None:
        out["revert"] = session.revert
    return out


def session_wire_v2(session: Session) -> dict:
    """The v2 mount's Session (opencode's SessionV2Info): where it is (`location`, `subpath`) instead of 1.18's
    directory and path, and none of 1.18's slug, version, share, summary, metadata or permission."""
    location = {"directory": session.directory}
    if session.workspace_id:
        location["workspaceID"] = session.workspace_id
    out: dict = {"id": session.id, "projectID": session.project_id, "location": location, "subpath": session.path}
    if session.parent_id:
        out["parentID"] = session.parent_id
    out["title"] = session.title
    if session.agent:
        out["agent"] = session.agent
    if session.model:
        out["model"] = session.model
    out["cost"] = session.cost
    out["tokens"] = session.tokens
    time: dict = {"created": session.time_created, "updated": session.time_updated}
    if session.time_archived is not None:
        time["archived"] = session.time_archived
    out["time"] = time
    if session.revert is not None:
        out["revert"] = session.revert
    return out


def public_info(info: dict) -> dict:
    """Keys starting with "_" are server-private bookkeeping (e.g. the runner's `_noReply` mark) and never
    leave the server."""
    if any(key.startswith("_") for key in info):
        return {k: v for k, v in info.items() if not k.startswith("_")}
    return info


def message_info(message: Message) -> dict:
    return public_info(message.info)


def part_wire(part: Part) -> dict:
    return part.data


def message_wire(message: Message, parts: Iterable[Part | dict]) -> dict:
    """`parts` may be Part rows or their wire dicts (what the list selectors return)."""
    return {"info": public_info(message.info), "parts": [p if isinstance(p, dict) else p.data for p in parts]}


def message_wire_stored(info_json: str, parts_json: list[str]) -> dict:
    """message_wire from the JSON text stored for the message and its parts, passed through unparsed
    (orjson.Fragment, see agentserver/http/renderers.py) unless the info holds private keys to drop."""
    info = public_info(orjson.loads(info_json)) if '"_' in info_json else orjson.Fragment(info_json)
    return {"info": info, "parts": [orjson.Fragment(part) for part in parts_json]}


def todo_wire(todo: Todo) -> dict:
    out = {"content": todo.content, "status": todo.status, "priority": todo.priority}
    if todo.todo_id:
        out["id"] = todo.todo_id
    return out


def session_event(session: Session) -> dict:
    """Payload of session.created / session.updated / session.deleted (1.18 adds sessionID)."""
    return {"sessionID": session.id, "info": session_wire(session)}
