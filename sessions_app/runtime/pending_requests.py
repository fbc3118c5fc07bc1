"""A pending request: what a tool asks the user and waits for. Two kinds, declared in runtime/asking.py: a
permission request and a question. Replying and listing are services (services/pending.py).

The row is the truth, not a worker's memory: the waiting tool polls it, so a reply that reaches another
worker still unblocks it, and a pending request survives a restart of the worker that asked. Its life:
pending → replied (answered) → used (the waiting tool read an allowing answer and went on, so a restart
must not re-run the call; runtime/resume.py reads this) — or rejected."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from django.db import models, transaction

from agentserver import ids
from agentserver.workers.loop import free_db
from audit_app.actors import Actor
from audit_app.actors import current as current_actor
from audit_app.log import record
from sessions_app.models import Session
from sessions_app.store import pending as request_rows
from sessions_app.store.messages import publish_for

POLL_SECONDS = 0.1
Result = TypeVar("Result")


@dataclass(frozen=True)
class RequestKind:
    """One kind of request: its rows, its ids, its events (`<name>.asked`, …) and its wire shape."""

    name: str                       # "permission": the events, and the label of its ids in a 400
    prefix: str                     # of its ids: "per"
    model: type[models.Model]
    wire: Callable[[Any], dict]     # the `<name>.asked` event and the original routes' lists
    reject: Callable[[Any], None]   # settles a locked pending row as rejected, and says so

    def event(self, happened: str) -> str:
        return f"{self.name}.{happened}"


def create(kind: RequestKind, session: Session, *, tool_ref: dict | None, request_id: str | None = None,
           **fields) -> Any:
    """Store a pending request and announce it (`<name>.asked`)."""
    with transaction.atomic():
        row = request_rows.insert(kind.model, id=request_id or ids.ascending(kind.prefix), session=session,
                                  tool=tool_ref or None, **fields)
        publish_for(session, kind.event("asked"), kind.wire(row))
        _record(kind, row, "asked", {"tool": tool_ref or None, **fields})
    return row


def _record(kind: RequestKind, row, happened: str, details: dict) -> None:
    """The audit record of a request asked or settled: by the person whose request this is (a reply), else by
    the agent of the session, on its owner's behalf (asking, or rejecting on abort)."""
    actor = current_actor() or Actor.agent(session_id=row.session_id, person_id=row.session.owner_id)
    record(action=kind.event(happened), actor=actor, object_type=kind.name, object_id=row.id,
           session_id=row.session_id, details=details)


def asked_before(kind: RequestKind, session: Session, tool_ref: dict | None, *, look_back: int,
                 same: Callable[[Any], bool] = lambda row: True, **filters) -> Any | None:
    """The request this tool call made before a restart (answered or still pending), so that a call re-run
    on another worker does not ask twice: among the session's last `look_back` matching `filters`."""
    if not (tool_ref and tool_ref.get("callID")):
        return None
    for row in request_rows.newest_of_session(kind.model, session, limit=look_back, **filters):
        if (row.tool or {}).get("callID") == tool_ref["callID"] and same(row):
            return row
    return None


def locked_pending(kind: RequestKind, **filters) -> list:
    """The pending rows matching `filters`, locked for an answer, oldest first."""
    return request_rows.locked_pending(kind.model, **filters)


def settle(kind: RequestKind, row, *, status: str, happened: str, stored: dict | None = None,
           announced: dict | None = None) -> None:
    """Store the outcome of a request and announce it (`<name>.<happened>` with the request's ids)."""
    row.status = status
    for field, value in (stored or {}).items():
        setattr(row, field, value)
    request_rows.save_outcome(row, ["status", *(stored or {})])
    publish_for(row.session, kind.event(happened),
                {"sessionID": row.session_id, "requestID": row.id, **(announced or {})})
    _record(kind, row, happened, {"status": status, **(stored or {})})


def _reject_if_pending(kind: RequestKind, request_id: str) -> None:
    with transaction.atomic():
        for row in locked_pending(kind, id=request_id):
            kind.reject(row)


def _mark_used(kind: RequestKind, request_id: str) -> None:
    request_rows.mark_used(kind.model, request_id)


async def wait_for_answer(kind: RequestKind, request_id: str, *, answer: tuple[str, ...], gone: tuple,
                          settle_answer: Callable[[tuple], Result], rejected: Callable[[], BaseException],
                          abort: asyncio.Event | None = None) -> Result:
    """Wait until the request is answered: its row `(status, *answer)` (`gone` when it was deleted) goes to
    `settle_answer`, which returns what the tool gets or raises its rejection; a `replied` row is then
    marked used. `abort` set while waiting: the request is rejected and `rejected()` raised. A cancelled
    wait leaves the row as it is, for the next run or the session's abort."""
    def read() -> tuple:
        row = request_rows.status_and(kind.model, request_id, answer)
        return row if row else gone

    def settled(row: tuple) -> Result:
        result = settle_answer(row)
        if row[0] == "replied":
            _mark_used(kind, request_id)
        return result

    read_async = free_db(read)
    while True:
        row = await read_async()
        if row[0] != "pending":
            return await free_db(settled)(row)
        if abort is not None and abort.is_set():
            await free_db(_reject_if_pending)(kind, request_id)
            raise rejected()
        await _pause(abort)


async def _pause(abort: asyncio.Event | None) -> None:
    if abort is None:
        await asyncio.sleep(POLL_SECONDS)
        return
    try:
        await asyncio.wait_for(abort.wait(), POLL_SECONDS)
    except asyncio.TimeoutError:
        pass
