"""Editing a session's stored history from a client (session.deleteMessage, part.update, part.delete).

A running turn writes the same rows, so removing a message of a busy session is a 409, as opencode does;
a part update replaces the stored part whole, after checking it names the part it replaces."""
from __future__ import annotations

from agentserver.errors import BadRequest, NotFound, SessionBusy
from sessions_app.models import Part, Session
from sessions_app.runtime import leases
from sessions_app.store import messages as message_service

PART_TYPES = ("text", "subtask", "reasoning", "file", "tool", "step-start", "step-finish", "snapshot", "patch",
              "agent", "retry", "compaction")


def message_delete(*, session: Session, message_id: str) -> bool:
    if leases.is_live(session.id):
        raise SessionBusy(f"Session is busy: {session.id}", sessionID=session.id)
    if not message_service.message_remove(session=session, message_id=message_id):
        raise NotFound(f"Message not found: {message_id}")
    return True


def _part_get(session: Session, message_id: str, part_id: str) -> Part:
    if not message_service.message_exists(session.id, message_id):
        raise NotFound(f"Message not found: {message_id}")
    part = message_service.part_of(session.id, message_id, part_id)
    if part is None:
        raise NotFound(f"Part not found: {part_id}")
    return part


def _field_error(field: str, message: str) -> BadRequest:
    return BadRequest(f"{field}: {message}", issues=[{"path": [field], "message": message}])


def _check_part(part: dict, *, session: Session, message_id: str, part_id: str) -> dict:
    for field, expected in (("id", part_id), ("messageID", message_id), ("sessionID", session.id)):
        if part.get(field, expected) != expected:
            raise _field_error(field, f"must be {expected!r}, the part in the URL")
    if part.get("type") not in PART_TYPES:
        raise _field_error("type", f"expected one of {', '.join(PART_TYPES)}")
    if part["type"] in ("text", "reasoning") and not isinstance(part.get("text"), str):
        raise _field_error("text", "required string")
    return {**part, "id": part_id, "messageID": message_id, "sessionID": session.id}


def part_update(*, session: Session, message_id: str, part_id: str, part: dict) -> dict:
    """Replace a stored part with `part` (the wire Part; ids default to the URL's)."""
    existing = _part_get(session, message_id, part_id)
    clean = _check_part(part, session=session, message_id=message_id, part_id=part_id)
    if clean["type"] != existing.type:
        raise _field_error("type", f"cannot change a {existing.type} part into {clean['type']}")
    return message_service.part_save(session=session, part=clean).data


def part_delete(*, session: Session, message_id: str, part_id: str) -> bool:
    _part_get(session, message_id, part_id)
    message_service.part_remove(session=session, message_id=message_id, part_id=part_id)
    return True
