"""Usage use cases: a model call's record when its request goes out, counting the call when it ends (called by
the runtime, inside the transaction of the step's end), ending the calls a dead worker left in flight, rolling
old records up per day."""
from __future__ import annotations

import datetime as dt

from django.db import transaction

from agentserver.workers import liveness
from usage_app import store
from usage_app.budgets import publish_crossed_warnings
from usage_app.calls import ModelCall
from usage_app.periods import day_start
from usage_app.zone import usage_zone


def do_record_start(*, call: ModelCall) -> None:
    """A model call's request goes out: its in-flight record, one statement committed at once (autocommit: the
    call may stream for minutes), counted nowhere until the call ends."""
    store.record_start(call)


def do_record_call(*, call: ModelCall | None) -> None:
    """Count one model call as it ended: its record and its day's total. Runs in the caller's transaction: a
    step's call is counted with the step's end, so a crash leaves both or neither (and the call in flight,
    for the worker that adopts the session to end). A budget whose warning threshold it crosses is announced
    to the person."""
    if call is not None and store.record_end(call):
        publish_crossed_warnings(person_id=call.person_id, cost=call.cost)


def calls_in_flight_elsewhere() -> bool:
    """Whether any other worker has model calls in flight, dead or alive (the in-flight index answers): a
    caller that must name sessions for do_end_dead_calls asks this first, as the sweep's own first read does."""
    return bool(store.workers_with_calls_in_flight())


def do_end_dead_calls(*, session_ids: list[str] | None = None) -> int:
    """The calls (of these sessions; of every session when None: the periodic sweep) that a dead worker left
    in flight (its process or host gone: its usage with it) ended as aborted and counted, once, however many
    workers do this at once; a live worker's are left to it. How many. Who is dead is read first, outside
    the transaction: the janitor asks every few seconds, and on SQLite a transaction takes the writer's turn."""
    dead = store.dead_workers_with_calls_in_flight(liveness.alive, session_ids)
    if not dead:
        return 0
    with transaction.atomic():
        return store.end_calls_in_flight(dead, session_ids)


def check_rollup_age(*, older_than_days: int) -> int:
    if not isinstance(older_than_days, int) or older_than_days < 1 or older_than_days > 36_500:
        raise ValueError("older than: a whole number of days from 1 to 36500")
    return older_than_days


def do_rollup(*, older_than_days: int) -> int:
    """The records of the days that ended `older_than_days` days ago or earlier (usage time zone) removed, in
    one transaction: their calls stay in the day sums per session and per person and model, which counted
    them as they ended, so no answer by whole days changes. Then, on PostgreSQL, the table is vacuumed.
    Returns how many records were removed."""
    check_rollup_age(older_than_days=older_than_days)
    today = dt.datetime.now(usage_zone()).date()
    cutoff = day_start(today - dt.timedelta(days=older_than_days - 1))
    with transaction.atomic():
        removed = store.records_remove_before(cutoff)
    if removed and not transaction.get_connection().in_atomic_block:
        store.tidy_after_rollup()
    return removed
