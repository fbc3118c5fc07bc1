"""Every model call the runtime makes is metered and counted once in the usage records (usage_app): written in
flight as its request goes out, then ended — a step's call with the step's end (runtime/assistant_message.py,
one transaction), a failed or retried attempt when it fails, an aborted one when the abort closes the step, a
title when it is made; a call its worker's death cut is ended as aborted by the worker that adopts the session
(runtime/resume.py), or, on a session nobody adopts (a title's call, an idle session), by the sweep every
worker's janitor makes (runtime/supervisor.py). Each is preceded by the budget check (usage_app.budgets)."""
from __future__ import annotations

from agentserver.workers.loop import db
from sessions_app.models import Session
from usage_app.budgets import check_model_call
from usage_app.calls import MeteredCall, ModelCall
from usage_app.services import do_end_dead_calls, do_record_call, do_record_start


def purpose_of(session: Session, info: dict) -> str:
    if info.get("summary") or info.get("mode") == "compaction":
        return "compaction"
    return "subagent" if session.parent_id else "step"


def _written_in_flight(call: MeteredCall) -> MeteredCall:
    async def record_start() -> None:
        await db(do_record_start)(call=call.in_flight())

    call.meter.on_request = record_start
    return call


def step_call(session: Session, info: dict) -> MeteredCall:
    """The meter of one attempt at the model call of the step writing `info` (its assistant message)."""
    return _written_in_flight(MeteredCall(
        person_id=session.owner_id, session_id=session.id, message_id=info["id"],
        agent=info.get("agent") or info.get("mode") or "", purpose=purpose_of(session, info),
        provider_id=info.get("providerID") or "", model_id=info.get("modelID") or ""))


def title_call(session: Session, provider_id: str, model_id: str) -> MeteredCall:
    return _written_in_flight(MeteredCall(person_id=session.owner_id, session_id=session.id, message_id="",
                                          agent="title", purpose="title", provider_id=provider_id,
                                          model_id=model_id))


def end_dead_calls(session_ids: list[str]) -> None:
    """(Synchronous, in a thread.) The calls of these sessions a dead worker left in flight, ended as aborted."""
    do_end_dead_calls(session_ids=session_ids)


def sweep_dead_calls() -> int:
    """(Synchronous, in a thread.) Every call a dead worker left in flight, of any session, ended as aborted."""
    return do_end_dead_calls()


async def check_budget(session: Session) -> None:
    """Before each model call: raises usage_app.budgets.BudgetSpent (a provider error) when a budget is spent."""
    await db(check_model_call)(person_id=session.owner_id, session_id=session.id)


async def record(call: ModelCall | None) -> None:
    """Count a call on its own (one that did not end a step: failed, aborted, a title)."""
    if call is not None:
        await db(do_record_call)(call=call)
