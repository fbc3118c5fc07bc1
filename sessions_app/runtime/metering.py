"""Every model call the runtime makes is metered and counted once in the usage records (usage_app): written in
flight as its request goes out, then ended — a step's call with the step's end (runtime/assistant_message.py,
one transaction), a failed or retried attempt when it fails, an aborted one when the abort closes the step, a
title when it is made; a call its worker's death cut is ended as aborted by the worker that adopts the session
(runtime/resume.py), or, on a session nobody adopts (a title's call, an idle session), by the sweep every
worker's janitor makes (runtime/supervisor.py). Each is preceded by the budget check (usage_app.budgets), made by
its meter as the call is prepared: a spent budget raises BudgetSpent (a provider error) from stream_chat."""
from __future__ import annotations

from django.db import transaction

from agentserver.workers.loop import db
from sessions_app.models import Session
from sessions_app.store.sessions import session_family_ids
from usage_app.budgets import check_model_call
from usage_app.calls import MeteredCall, ModelCall
from usage_app.services import calls_in_flight_elsewhere, do_end_dead_calls, do_record_call, do_record_start


def purpose_of(session: Session, info: dict) -> str:
    if info.get("summary") or info.get("mode") == "compaction":
        return "compaction"
    return "subagent" if session.parent_id else "step"


def _metered(call: MeteredCall) -> MeteredCall:
    """The call's meter checks the budgets before the call is prepared and writes its in-flight record as
    its request goes out, on the thread that prepares it (providers_app.llm)."""
    call.meter.admit = lambda: check_model_call(person_id=call.person_id, session_id=call.session_id)
    call.meter.on_request = lambda: do_record_start(call=call.in_flight())
    return call


def step_call(session: Session, info: dict) -> MeteredCall:
    """The meter of one attempt at the model call of the step writing `info` (its assistant message)."""
    return _metered(MeteredCall(
        person_id=session.owner_id, session_id=session.id, message_id=info["id"],
        agent=info.get("agent") or info.get("mode") or "", purpose=purpose_of(session, info),
        provider_id=info.get("providerID") or "", model_id=info.get("modelID") or ""))


def title_call(session: Session, provider_id: str, model_id: str) -> MeteredCall:
    return _metered(MeteredCall(person_id=session.owner_id, session_id=session.id, message_id="",
                                          agent="title", purpose="title", provider_id=provider_id,
                                          model_id=model_id))


def end_dead_calls(session: Session) -> None:
    """(Synchronous, in a thread.) The calls a dead worker left in flight in this session and the sessions
    below it (they ran inline), ended as aborted. The family is read only when some other worker has calls in
    flight at all: at nearly every turn's start none has."""
    if calls_in_flight_elsewhere():
        do_end_dead_calls(session_ids=session_family_ids(session))


def sweep_dead_calls() -> int:
    """(Synchronous, in a thread.) Every call a dead worker left in flight, of any session, ended as aborted."""
    return do_end_dead_calls()


def count(call: ModelCall | None) -> None:
    """(Synchronous, in the caller's transaction.) Count a call that ended."""
    do_record_call(call=call)


async def record(call: ModelCall | None) -> None:
    """Count a call on its own (one that did not end a step: failed, aborted), in a transaction of its own: the
    record and its day sums, or none of them."""
    if call is not None:
        await db(_count_atomically)(call)


def _count_atomically(call: ModelCall) -> None:
    with transaction.atomic():
        count(call)
