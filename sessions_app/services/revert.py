"""Revert, unrevert and the clean-up that makes a revert final (reference §5.7, opencode `session/revert.ts`).

Revert puts the files back as they were before the target point and records `session.revert`; the
messages stay until the next prompt/shell/command runs `revert_cleanup`. Revert and unrevert hold the
session's lease while they work, so they never race a running turn (a busy session is a 409)."""
from __future__ import annotations

import uuid
from contextlib import contextmanager

from agentserver import workers
from agentserver.errors import NotFound, SessionBusy
from sessions_app.models import Message, Part, Session
from sessions_app.runtime import leases
from sessions_app.store import messages as message_service
from sessions_app.runtime.session_diff import snapshots_for


@contextmanager
def _exclusive(session: Session):
    from sessions_app.runtime import supervisor
    from sessions_app.runtime.message_queue import next_pending

    holder = f"{workers.WORKER_ID}:revert:{uuid.uuid4().hex[:8]}"
    if not leases.acquire(session.id, holder):
        raise SessionBusy(f"Session {session.id} is busy", sessionID=session.id)
    try:
        yield
    finally:
        leases.release(session.id, holder)
        # A prompt that arrived meanwhile found the lease taken: start its runner now.
        if next_pending(session.id) is not None:
            supervisor.kick(session.id)


def _target(session: Session, message_id: str, part_id: str | None) -> tuple[dict | None, list[dict]]:
    """The revert record {messageID, partID?} for the target, and the patch parts from that point on (in order).
    A whole-message revert starts at the latest user message at or before the target: reverting an assistant
    message reverts its whole turn."""
    messages = list(Message.objects.filter(session=session).order_by("id").values_list("id", "role"))
    parts: dict[str, list[dict]] = {mid: [] for mid, _ in messages}
    for mid, data in (Part.objects.filter(session=session).order_by("message_id", "id")
                      .values_list("message_id", "data")):
        parts.setdefault(mid, []).append(data)
    revert: dict | None = None
    last_user: str | None = None
    for mid, role in messages:
        if role == "user":
            last_user = mid
        if mid != message_id:
            continue
        if part_id:
            before = [p for p in parts[mid] if p.get("id", "") < part_id]
            # With no text/tool part before it (or an unknown part), a part revert is a whole-message revert.
            if any(p.get("id") == part_id for p in parts[mid]) and any(
                    p.get("type") in ("text", "tool") for p in before):
                revert = {"messageID": mid, "partID": part_id}
        revert = revert or {"messageID": last_user or mid}
        break
    if revert is None:
        return None, []
    start, first_part = revert["messageID"], revert.get("partID")
    patches = [p for mid, _ in messages if mid >= start for p in parts[mid]
               if p.get("type") == "patch" and not (first_part and mid == start and p.get("id", "") < first_part)]
    return revert, patches


def session_revert(*, session: Session, message_id: str, part_id: str | None = None, files: bool = True,
                   must_exist: bool = False) -> Session:
    """`files=False` (v2 session.revert.stage) stages the boundary and leaves the files as they are;
    `must_exist`: an unknown message is a 404 (v2) rather than a revert of nothing (1.18)."""
    from sessions_app.store.sessions import session_set

    with _exclusive(session):
        session.refresh_from_db()
        revert, patches = _target(session, message_id, part_id)
        if revert is None:
            if must_exist:
                raise NotFound(f"Message not found: {message_id}", sessionID=session.id, messageID=message_id)
            return session
        if not files:
            # Files an earlier stage put back stay so, and its snapshot stays to restore them.
            if (session.revert or {}).get("snapshot"):
                revert["snapshot"] = session.revert["snapshot"]
            return session_set(session=session, revert=revert)
        snaps = snapshots_for(session)
        snapshot = (session.revert or {}).get("snapshot")
        if snaps is not None:
            if snapshot:
                snaps.restore(snapshot)  # moving the boundary of an earlier revert starts from the full state
            snapshot = snapshot or snaps.track()
            snaps.revert([{"hash": p.get("hash"), "files": p.get("files") or []} for p in patches])
        if snapshot:
            revert["snapshot"] = snapshot
            revert["diff"] = snaps.diff(snapshot) if snaps is not None else ""
        return session_set(session=session, revert=revert)


def session_unrevert(*, session: Session) -> Session:
    from sessions_app.store.sessions import session_set

    with _exclusive(session):
        session.refresh_from_db()
        if not session.revert:
            return session
        snapshot = session.revert.get("snapshot")
        snaps = snapshots_for(session) if snapshot else None
        if snaps is not None:
            snaps.restore(snapshot)
        return session_set(session=session, revert=None)


def revert_cleanup(*, session: Session) -> None:
    """Make a staged revert final: messages from `revert.messageID` on are deleted (with a partID, that message
    keeps the parts before it), then `revert` is cleared and the session summary recomputed."""
    from sessions_app.runtime.session_diff import summarize
    from sessions_app.store.sessions import session_set

    session.refresh_from_db()
    revert = session.revert
    if not revert:
        return
    message_id, part_id = revert.get("messageID"), revert.get("partID")
    doomed = Message.objects.filter(session=session)
    doomed = doomed.filter(id__gt=message_id) if part_id else doomed.filter(id__gte=message_id)
    for mid in list(doomed.order_by("id").values_list("id", flat=True)):
        message_service.message_remove(session=session, message_id=mid)
    if part_id:
        parts = Part.objects.filter(session=session, message_id=message_id, id__gte=part_id).order_by("id")
        for pid in list(parts.values_list("id", flat=True)):
            message_service.part_remove(session=session, message_id=message_id, part_id=pid)
    session_set(session=session, revert=None)
    summarize(session=session, user_message_id=None)


def session_revert_commit(*, session: Session) -> Session:
    """v2 session.revert.commit: make the staged revert final now rather than at the next prompt."""
    with _exclusive(session):
        revert_cleanup(session=session)
    session.refresh_from_db()
    return session
