"""Session and per-turn file diffs from the step snapshots (reference §5.2 step 10, §5.7 "Session diff",
opencode `session/summary.ts`).

A turn's diff runs from the first `step-start` snapshot to the last `step-finish` snapshot among a user
message and its assistant replies; the whole-session diff does the same over every message. After each
step the runner stores the session's `summary {additions, deletions, files}`, publishes `session.diff`
and writes the turn's diffs onto the user message's `summary.diffs`."""
from __future__ import annotations

from sessions_app.models import Session
from sessions_app.runtime import snapshots as snapshot_store
from sessions_app.store import messages as message_service
from sessions_app.store.rows import session_reload


def snapshots_for(session: Session):
    """The snapshot repository of the session's pinned context (None when off or the directory is gone)."""
    from sessions_app.runtime.turn_setup import load_config, session_context

    try:
        context = session_context(session)
        return snapshot_store.for_context(context, load_config(context))
    except Exception:  # noqa: BLE001 — a vanished or no longer allowed directory has no snapshots
        return None


def _turn_message_ids(session: Session, user_message_id: str) -> list[str]:
    return [user_message_id] + message_service.answer_ids(session.id, user_message_id)


def turn_diff(*, session: Session, message_id: str, snaps=None) -> list[dict]:
    """The FileDiffs of one turn. An assistant message stands for the turn it answers; unknown → []."""
    message = message_service.message_of(session.id, message_id)
    if message is None:
        return []
    user_id = message.id if message.role == "user" else (message.info or {}).get("parentID")
    if not isinstance(user_id, str):
        return []
    start, end = message_service.turn_snapshots(session.id, _turn_message_ids(session, user_id))
    return _diff(session, start, end, snaps)


def whole_diff(*, session: Session, snaps=None) -> list[dict]:
    start, end = message_service.first_snapshot_step(session.id), message_service.last_snapshot_step(session.id)
    return _diff(session, start and start.get("snapshot"), end and end.get("snapshot"), snaps)


def _diff(session: Session, start: str | None, end: str | None, snaps) -> list[dict]:
    if not start or not end or start == end:
        return []
    snaps = snaps or snapshots_for(session)
    return snaps.diff_full(start, end) if snaps is not None else []


def totals(diffs: list[dict]) -> dict:
    return {"additions": sum(d.get("additions") or 0 for d in diffs),
            "deletions": sum(d.get("deletions") or 0 for d in diffs), "files": len(diffs)}


def summarize(*, session: Session, user_message_id: str | None, snaps=None, changed: bool = True) -> None:
    """After a step: session summary (session.updated), `session.diff`, the user message's summary.diffs
    (message.updated). A step that changed nothing skips the work once a summary exists, and leaves the
    user message alone."""
    from sessions_app.store.sessions import session_set

    session_reload(session)
    if not changed and session.summary is not None:
        return
    snaps = snaps or snapshots_for(session)
    diffs = whole_diff(session=session, snaps=snaps)
    summary = totals(diffs)
    if summary != session.summary:
        session_set(session=session, touch=False, summary=summary)
    message_service.publish_for(session, "session.diff", {"sessionID": session.id, "diff": diffs})
    if not user_message_id or not changed:
        # A step that changed nothing leaves its turn's diff as the turn's earlier steps (or the first
        # step's empty stub) left it on the user message.
        return
    user = message_service.user_message(session.id, user_message_id)
    if user is None:
        return
    turn = turn_diff(session=session, message_id=user_message_id, snaps=snaps)
    info = dict(user.info)
    if (info.get("summary") or {}).get("diffs") != turn:
        info["summary"] = {**(info.get("summary") or {}), "diffs": turn}
        message_service.message_save(session=session, info=info)
