"""Revert, unrevert and the clean-up that makes a revert final (reference §5.7, opencode `session/revert.ts`).

Revert puts the files back as they were before the target point and records `session.revert`; the
messages stay until the next prompt/shell/command makes it final (`do_revert_finalize`, in the transaction
that stores its messages, after everything that could refuse it was checked). Revert and unrevert hold the
session's lease while they work, so they never race a running turn (a busy session is a 409). Either one
refuses, with nothing changed, when the snapshots it would restore from cannot be read (409
SnapshotUnavailableError): a success that put nothing back would have the person believe their files were."""
from __future__ import annotations

import logging
import uuid
from contextlib import contextmanager

from django.db import transaction

from agentserver.errors import NotFound, SessionBusy, SnapshotUnavailable
from agentserver.sandbox import launcher as sandbox
from agentserver.workers import liveness as workers
from sessions_app.models import Session
from sessions_app.runtime import leases
from sessions_app.runtime.session_diff import snapshots_for
from sessions_app.runtime.snapshots import Snapshots
from sessions_app.store import messages as message_service
from sessions_app.store.sessions import session_refresh, session_refresh_revert

log = logging.getLogger(__name__)


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


def _target(session: Session, message_id: str, part_id: str | None) -> tuple[dict | None, list[dict], bool]:
    """The revert record {messageID, partID?} for the target, the patch parts from that point on (in order),
    and whether a step from that point on has no snapshot (its file changes were never recorded).
    A whole-message revert starts at the latest user message at or before the target: reverting an assistant
    message reverts its whole turn."""
    messages = message_service.ids_and_roles(session.id)
    parts: dict[str, list[dict]] = {mid: [] for mid, _ in messages}
    for mid, data in message_service.part_data_by_message(session.id):
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
        return None, [], False
    start, first_part = revert["messageID"], revert.get("partID")
    reverted = [p for mid, _ in messages if mid >= start for p in parts[mid]
                if not (first_part and mid == start and p.get("id", "") < first_part)]
    patches = [p for p in reverted if p.get("type") == "patch"]
    untracked = any(p.get("type") in ("step-start", "step-finish") and not p.get("snapshot") for p in reverted)
    return revert, patches, untracked


def _unavailable(session: Session, why: str) -> SnapshotUnavailable:
    return SnapshotUnavailable(f"The files of session {session.id} cannot be restored: {why}. Nothing was "
                               "changed.", sessionID=session.id)


def check_restorable(*, session: Session, snaps: Snapshots | None, trees: list, untracked: bool = False) -> None:
    """Refuse (409) a revert or unrevert that could not put back the files it promises: snapshots `trees` it
    restores from that the store cannot read (deleted, damaged, or snapshots now off), or steps whose snapshots
    were never taken. Changes nothing."""
    if snaps is None:
        if trees:
            raise _unavailable(session, "its snapshots cannot be read (snapshots are off, or its directory is "
                                        "gone)")
        return
    if untracked:
        raise _unavailable(session, "snapshots were not taken for every step it would revert (the snapshot "
                                    "store could not be written then)")
    sandbox.require()
    try:
        readable = snaps.readable(trees)
    except OSError:
        readable = False
    if not readable:
        log.warning("revert: session %s: snapshots %s cannot be read from %s", session.id, trees, snaps.gitdir)
        raise _unavailable(session, "its snapshot store cannot be read (deleted or damaged)")


def _revert_files(session: Session, snaps: Snapshots, earlier: str | None, patches: list[dict]) -> dict:
    """Put the files back (from the full state of an earlier revert's snapshot, when the boundary moves);
    the record's {snapshot, diff}. A failure partway puts the files back as they were and refuses."""
    try:
        now = snaps.track()
        if now is None:
            raise _unavailable(session, "its snapshot store cannot be written")
        if (earlier and not snaps.restore(earlier)) or snaps.revert(
                [{"hash": p.get("hash"), "files": p.get("files") or []} for p in patches]):
            snaps.restore(now)
            raise _unavailable(session, "a snapshot could not be read")
        snapshot = earlier or now
        return {"snapshot": snapshot, "diff": snaps.diff(snapshot)}
    except OSError as error:
        log.warning("revert: session %s: %s", session.id, error)
        raise _unavailable(session, "its snapshot store cannot be read") from None


def session_revert(*, session: Session, message_id: str, part_id: str | None = None, files: bool = True,
                   must_exist: bool = False) -> Session:
    """`files=False` (v2 session.revert.stage) stages the boundary and leaves the files as they are;
    `must_exist`: an unknown message is a 404 (v2) rather than a revert of nothing (1.18). Files that cannot
    be put back are a 409 with nothing changed."""
    from sessions_app.store.sessions import session_set

    with _exclusive(session):
        session_refresh(session)
        revert, patches, untracked = _target(session, message_id, part_id)
        if revert is None:
            if must_exist:
                raise NotFound(f"Message not found: {message_id}", sessionID=session.id, messageID=message_id)
            return session
        earlier = (session.revert or {}).get("snapshot")
        if not files:
            # Files an earlier stage put back stay so, and its snapshot stays to restore them.
            if earlier:
                revert["snapshot"] = earlier
            return session_set(session=session, revert=revert)
        snaps = snapshots_for(session)
        trees = [earlier] if earlier else []
        for patch in patches:
            if patch.get("files") and patch.get("hash") not in trees:
                trees.append(patch.get("hash"))
        check_restorable(session=session, snaps=snaps, trees=trees, untracked=untracked)
        if snaps is not None:
            revert.update(_revert_files(session, snaps, earlier, patches))
        return session_set(session=session, revert=revert)


def session_unrevert(*, session: Session) -> Session:
    """Put back the files a revert restored (from its snapshot) and clear it; 409 with nothing changed when
    that snapshot cannot be read."""
    from sessions_app.store.sessions import session_set

    with _exclusive(session):
        session_refresh(session)
        if not session.revert:
            return session
        snapshot = session.revert.get("snapshot")
        if snapshot:
            snaps = snapshots_for(session)
            check_restorable(session=session, snaps=snaps, trees=[snapshot])
            try:
                restored = snaps.restore(snapshot)
            except OSError:
                restored = False
            if not restored:
                raise _unavailable(session, "its snapshot could not be read")
        return session_set(session=session, revert=None)


def _reverted(session: Session, revert: dict) -> list[str]:
    """The ids of the messages a staged revert removes when it becomes final (with a partID, that message
    stays), oldest first."""
    return message_service.message_ids_from(session.id, revert.get("messageID"), including=not revert.get("partID"))


def reverted_message_ids(session: Session) -> list[str]:
    """The ids of the messages the session's staged revert would remove (none without one)."""
    return _reverted(session, session.revert) if session.revert else []


def do_revert_finalize(*, session: Session) -> bool:
    """Make a staged revert final, rows only, in the caller's transaction: messages from `revert.messageID`
    on are deleted (with a partID, that message keeps the parts before it) and `revert` is cleared. Whether
    there was one; its caller recomputes the session summary after the commit (`revert_summarize`)."""
    from sessions_app.store.sessions import session_set

    session_refresh_revert(session)  # what is staged now, not when the caller's request began
    revert = session.revert
    if not revert:
        return False
    message_id, part_id = revert.get("messageID"), revert.get("partID")
    for mid in _reverted(session, revert):
        message_service.message_remove(session=session, message_id=mid)
    if part_id:
        for pid in message_service.part_ids_from(session.id, message_id, part_id):
            message_service.part_remove(session=session, message_id=message_id, part_id=pid)
    session_set(session=session, revert=None)
    return True


def revert_summarize(*, session: Session) -> None:
    """The session's summary once a revert is final (git work: outside the transaction that removed rows)."""
    from sessions_app.runtime.session_diff import summarize

    summarize(session=session, user_message_id=None)


def revert_cleanup(*, session: Session) -> None:
    """Make a staged revert final now (messages removed, `revert` cleared, the summary recomputed)."""
    with transaction.atomic():
        finalized = do_revert_finalize(session=session)
    if finalized:
        revert_summarize(session=session)


def session_revert_commit(*, session: Session) -> Session:
    """v2 session.revert.commit: make the staged revert final now rather than at the next prompt."""
    with _exclusive(session):
        revert_cleanup(session=session)
    session_refresh(session)
    return session
