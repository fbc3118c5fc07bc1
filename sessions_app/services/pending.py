"""Pending requests, the user's side, for either kind (runtime/pending_requests.py): list them, get one,
reply, reject, and reject a session's on abort. How a kind's reply is checked and what it does is that
kind's `Answering` (services/permissions.py, services/questions.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from django.db import transaction

from agentserver.errors import NotFound
from sessions_app.models import Session
from sessions_app.runtime import pending_requests
from sessions_app.runtime.pending_requests import RequestKind
from sessions_app.store import pending as request_rows


@dataclass(frozen=True)
class Answering:
    """How the user answers one kind of request."""

    kind: RequestKind
    noun: str                               # "Permission request": in the 404's "<noun> not found: <id>"
    check: Callable[[dict], None]           # refuses a malformed answer (400) before anything is read
    apply: Callable[[Any, dict], bool]      # stores the answer of a locked pending row; True: the call goes on


def request_list(answering: Answering, *, user, project_id: str | None = None,
                 session: Session | None = None) -> list[dict]:
    """The caller's pending requests of one kind, oldest first; of one project or one session."""
    kind = answering.kind
    rows = request_rows.pending_of_owner(kind.model, user=user, project_id=project_id, session=session)
    return [kind.wire(row) for row in rows]


def request_get(answering: Answering, *, session: Session, request_id: str) -> dict:
    """A pending request of the caller's session."""
    row = request_rows.pending_in_session(answering.kind.model, session=session, request_id=request_id)
    if row is None:
        raise _not_found(answering, request_id)
    return answering.kind.wire(row)


def request_reply(answering: Answering, *, user, request_id: str, answer: dict,
                  session_id: str | None = None) -> bool:
    """Answer a pending request of the caller's (with `session_id`, of that session only). An answer that
    lets the asking call go on wakes its session if the runner that asked is gone (runtime/resume.py)."""
    answering.check(answer)
    with transaction.atomic():
        request = _pending_for(answering, user=user, request_id=request_id, session_id=session_id)
        goes_on = answering.apply(request, answer)
    if goes_on and request.tool:
        from sessions_app.runtime.supervisor import wake_if_orphaned

        wake_if_orphaned(request.session_id)
    return True


def request_reject(answering: Answering, *, user, request_id: str, session_id: str | None = None) -> bool:
    with transaction.atomic():
        answering.kind.reject(_pending_for(answering, user=user, request_id=request_id, session_id=session_id))
    return True


def reject_all(answering: Answering, *, session: Session) -> int:
    """On abort: every pending request of the session is rejected (its waiting tool raises)."""
    with transaction.atomic():
        rows = pending_requests.locked_pending(answering.kind, session=session)
        for row in rows:
            answering.kind.reject(row)
    return len(rows)


def _pending_for(answering: Answering, *, user, request_id: str, session_id: str | None):
    filters = {"session_id": session_id} if session_id is not None else {}
    rows = pending_requests.locked_pending(answering.kind, id=request_id, session__owner=user, **filters)
    if not rows:
        raise _not_found(answering, request_id)
    return rows[0]


def _not_found(answering: Answering, request_id: str) -> NotFound:
    return NotFound(f"{answering.noun} not found: {request_id}", requestID=request_id)
