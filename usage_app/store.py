"""The only code that writes usage_app's tables, and the reads the budget check makes before every model call
(usage_app/selectors.py reads the usage for people)."""
from __future__ import annotations

import datetime as dt
from functools import cache

from django.db import connection
from django.db.models import Q, Sum

from agentserver.db import sql
from agentserver.workers.liveness import WORKER_ID
from usage_app.calls import ModelCall
from usage_app.models import (
    BY_SWEEP,
    BY_WORKER,
    BY_WORKER_AFTER_SWEEP,
    IN_FLIGHT,
    Budget,
    UsageDay,
    UsageDayTotal,
    UsageRecord,
)
from usage_app.zone import usage_zone

ENDED = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens", "cost",
         "priced", "usage_reported", "credential", "duration_ms", "outcome")
# A record's columns in the order _values gives them.
COLUMNS = ("call_id", "at", "day", "person_id", "person_key", "session_id", "message_id", "agent", "purpose",
           "provider_id", "model_id", *ENDED, "worker")
# What the day sums add up of an ended record (its RETURNING list and the day sum upserts' columns).
# A call its worker ended after a sweep had ended it (BY_WORKER_AFTER_SWEEP) adds what it changes: the sweep
# counted the call, as failed and unreported, with nothing used.
_AGAIN = f"CASE WHEN ended_by = '{BY_WORKER_AFTER_SWEEP}' THEN 1 ELSE 0 END"
COUNTED = (f"1 - {_AGAIN} AS calls, "
           f"CASE WHEN outcome IN ('error', 'aborted') THEN 1 ELSE 0 END - {_AGAIN} AS failed_calls, "
           f"CASE WHEN priced THEN 0 ELSE 1 - {_AGAIN} END AS unpriced_calls, "
           f"CASE WHEN usage_reported THEN 0 ELSE 1 END - {_AGAIN} AS unreported_calls, input_tokens, "
           "output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cost, duration_ms")
DAY_ROW = "day, person_key, session_id, provider_id, model_id, person_id"


def _values(call: ModelCall) -> list:
    """The call's record as the parameters of COLUMNS, built straight from the call (a model instance and
    dataclasses.asdict cost more than the statement)."""
    at = dt.datetime.fromtimestamp(call.started_ms / 1000, tz=dt.UTC)
    ops = connection.ops
    return [call.call_id, ops.adapt_datetimefield_value(at),
            ops.adapt_datefield_value(at.astimezone(usage_zone()).date()), call.person_id, call.person_id,
            call.session_id, call.message_id, call.agent, call.purpose, call.provider_id, call.model_id,
            call.input_tokens, call.output_tokens, call.reasoning_tokens, call.cache_read_tokens,
            call.cache_write_tokens, float(call.cost), call.priced, call.usage_reported, call.credential,
            call.duration_ms, call.outcome, WORKER_ID]


@cache
def _insert(ended: bool) -> str:
    """The record's INSERT. Its start (`ended` false): a record already there (the call ended first) is left
    as it is. Its end: a record still in flight takes what the call used and how it ended (by call id, in the
    same statement as the insert, so an in-flight insert that commits while this runs cannot slip between
    an update that found nothing and an insert); so does one a sweep ended for this same worker, taken for
    dead while it was alive; one that had ended already otherwise is left, and no row comes back."""
    head = (f"INSERT INTO {UsageRecord._meta.db_table} AS r ({', '.join(COLUMNS)}) "
            f"VALUES ({', '.join(['%s'] * len(COLUMNS))}) ON CONFLICT (call_id) ")
    if not ended:
        return head + "DO NOTHING"
    taken = ", ".join(f"{name} = EXCLUDED.{name}" for name in ENDED)
    return head + (f"DO UPDATE SET {taken}, ended_by = CASE WHEN r.ended_by = '{BY_SWEEP}' THEN "
                   f"'{BY_WORKER_AFTER_SWEEP}' ELSE '{BY_WORKER}' END WHERE r.outcome = '{IN_FLIGHT}' OR "
                   f"(r.ended_by = '{BY_SWEEP}' AND r.worker = EXCLUDED.worker) RETURNING ")


def record_start(call: ModelCall) -> None:
    """The call's record as its request goes out (outcome in_flight, nothing used yet), so that a worker's
    death cannot lose it: counted nowhere until it ends. A record already there is left as it is."""
    with connection.cursor() as cursor:
        cursor.execute(_insert(False), _values(call))


def record_end(call: ModelCall) -> bool:
    """The call ended: its in-flight record takes what it used and how it ended, or, when there is none (a
    call whose start was not written), its record is inserted. A record a sweep ended for this worker, taken
    for dead while it was alive, takes this ending, and the day sums take back what the sweep counted. A
    record that had ended otherwise wins: this ending is dropped. Whether it was counted; when it was, its day
    sums are added to (same transaction)."""
    values = _values(call)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":  # the record ended and both day sums added to: one round trip
            cursor.execute(_ended_with_day_sums(), values)
            return cursor.rowcount == 1
        cursor.execute(_insert(True) + DAY_ROW + ", " + COUNTED, values)
        counted = cursor.fetchone()
        if counted is not None:
            _add_to_day_sums(cursor, counted)
        return counted is not None


def workers_with_calls_in_flight(session_ids: list[str] | None = None) -> set[str]:
    """The other workers with calls in flight (of these sessions): a lookup in the index of in-flight records,
    which holds only the calls under way. Every turn's start asks (runtime/resume.py): the answer is nearly
    always that no other worker has any, found by the compiled query alone."""
    workers = set(_WORKERS_IN_FLIGHT.all(WORKER_ID))
    if session_ids is None or not workers:
        return workers
    return set(UsageRecord.objects.filter(session_id__in=session_ids, outcome=IN_FLIGHT)
               .exclude(worker=WORKER_ID).values_list("worker", flat=True).distinct())


_WORKERS_IN_FLIGHT = sql.Query(lambda worker: UsageRecord.objects.filter(outcome=IN_FLIGHT).exclude(worker=worker)
                               .values_list("worker", flat=True).distinct())


def dead_workers_with_calls_in_flight(alive, session_ids: list[str] | None = None) -> list[str]:
    """The other workers with calls in flight (of these sessions; of any when None) that `alive` (a set of
    worker ids → those alive) says are dead. A read: no transaction, no writer's turn."""
    workers = workers_with_calls_in_flight(session_ids)
    return sorted(workers - alive(workers)) if workers else []


def end_calls_in_flight(workers: list[str], session_ids: list[str] | None = None) -> int:
    """The in-flight records (of these sessions; of any when None) made by these dead workers: ended as
    aborted, with no usage reported (it died with the worker), and counted, in the caller's transaction. One
    UPDATE of the records still in flight, returning those it ended: two workers doing this at once end each
    record once (on PostgreSQL the second waits for the first's rows and then finds them ended; SQLite has one
    writer). How many."""
    if not workers:
        return 0
    quote = connection.ops.quote_name
    condition = f"{quote('worker')} IN ({', '.join(['%s'] * len(workers))})"
    params: list = list(workers)
    if session_ids is not None:
        condition += f" AND {quote('session_id')} IN ({', '.join(['%s'] * len(session_ids))})"
        params += session_ids
    ended = 0
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {quote(UsageRecord._meta.db_table)} SET {quote('outcome')} = 'aborted', "
                       f"{quote('usage_reported')} = %s, {quote('ended_by')} = '{BY_SWEEP}' "
                       f"WHERE {quote('outcome')} = '{IN_FLIGHT}' AND {condition} "
                       f"RETURNING {DAY_ROW}, {COUNTED}", [False, *params])
        for counted in cursor.fetchall():
            _add_to_day_sums(cursor, counted)
            ended += 1
    return ended


DAY_SUMS = ("calls", "failed_calls", "unpriced_calls", "unreported_calls", "input_tokens", "output_tokens",
            "reasoning_tokens", "cache_read_tokens", "cache_write_tokens", "cost", "duration_ms")
DAY_KEYS = {UsageDay: ("day", "person_key", "session_id", "provider_id", "model_id"),
            UsageDayTotal: ("day", "person_key", "provider_id", "model_id")}


@cache
def _day_sum_upsert(model, source: str | None = None) -> str:
    """INSERT … ON CONFLICT DO UPDATE adding to the row of the call's key (SQLite and PostgreSQL alike),
    spelt out once per table; its values bound, or selected from `source` (a WITH query's name). Names are
    written bare and the tables aliased: psycopg caches a statement's parsing only up to 4,096 characters, and
    the end of a call with both day sums went past that (parsed anew at every call: 0.2 ms of CPU)."""
    key = DAY_KEYS[model]
    extra = ("person_id",) if model is UsageDay else ()
    names = (*key, *extra, *DAY_SUMS)
    values = (f"SELECT {', '.join(names)} FROM {source}" if source
              else f"VALUES ({', '.join(['%s'] * len(names))})")
    added = ", ".join(f"{name} = s.{name} + EXCLUDED.{name}" for name in DAY_SUMS)
    return (f"INSERT INTO {model._meta.db_table} AS s ({', '.join(names)}) {values} "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {added}")


@cache
def _ended_with_day_sums() -> str:
    """PostgreSQL: the record's ending (_insert(True)) and the day sums' upserts fed by the row it returns, as
    one statement (data-modifying WITH); its row count is 1 when the call was counted. Parameters: COLUMNS'."""
    by_session, total = (_day_sum_upsert(model, source="ended") for model in (UsageDay, UsageDayTotal))
    return (f"WITH ended AS ({_insert(True)}{DAY_ROW}, {COUNTED}), by_session AS ({by_session}) {total}")


def _add_to_day_sums(cursor, counted: tuple) -> None:
    """One ended call added to its day's sums per session (UsageDay) and per person and model (UsageDayTotal),
    in the caller's transaction. `counted`: DAY_ROW then the day sums' values, as the record returns them."""
    day, person_key, session_id, provider_id, model_id, person_id, *sums = counted
    cursor.execute(_day_sum_upsert(UsageDay), [day, person_key, session_id, provider_id, model_id, person_id, *sums])
    cursor.execute(_day_sum_upsert(UsageDayTotal), [day, person_key, provider_id, model_id, *sums])


def records_remove_before(cutoff: dt.datetime) -> int:
    """Remove the records of ended calls that started before `cutoff` (their calls stay in the day sums,
    which counted them when they ended; a call still in flight stays until it ends). How many."""
    removed, _ = UsageRecord.objects.exclude(outcome=IN_FLIGHT).filter(at__lt=cutoff).delete()
    return removed


def tidy_after_rollup() -> None:
    """PostgreSQL: reclaim the removed records and refresh the planner's statistics now (outside any
    transaction), rather than when autovacuum comes by: until then the indexes still point at every removed
    row, and a query by person read each of them."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {connection.ops.quote_name(UsageRecord._meta.db_table)}")


# ---- what the budget check reads (usage_app/budgets.py), compiled once: it runs before every model call ----

_BUDGETS = sql.Query(
    lambda person_id: Budget.objects.filter(Q(scope="everyone") | Q(scope="person", person_id=person_id)
                                            | Q(scope="group", group__user__id=person_id))
    .values_list("scope", "period", "amount", "warn_percent", "group__name"))


def budget_rows_of(person_id: int) -> list[tuple]:
    """(scope, period, amount, warn percent, group name) of every budget a person is under: everyone's, their
    own and their groups'."""
    return _BUDGETS.all(person_id)


def every_budget_row() -> list[tuple]:
    """(scope, period, amount, warn percent, group name, group id, person id) of every budget."""
    return list(Budget.objects.values_list("scope", "period", "amount", "warn_percent", "group__name", "group_id",
                                           "person_id"))


def _person_totals(person_key: int, day: dt.date, week: dt.date, month: dt.date, since: dt.date):
    return (UsageDayTotal.objects.filter(person_key=person_key, day__gte=since).values("person_key")
            .annotate(spent_day=Sum("cost", filter=Q(day__gte=day)), spent_week=Sum("cost", filter=Q(day__gte=week)),
                      spent_month=Sum("cost", filter=Q(day__gte=month)))
            .values_list("spent_day", "spent_week", "spent_month"))


_PERSON_TOTALS = sql.Query(_person_totals)
_SESSION_SPENT = sql.Query(
    lambda session_id: UsageDay.objects.filter(session_id=session_id).values("session_id")
    .annotate(spent=Sum("cost")).values_list("spent", flat=True))


def person_spent_since(person_key: int, day: dt.date, week: dt.date, month: dt.date,
                       since: dt.date) -> tuple | None:
    """What a person's ended calls cost from each of these days on (their day totals), or None when nothing."""
    return _PERSON_TOTALS.first(person_key, day, week, month, since)


def session_spent(session_id: str) -> float | None:
    """What a session's ended calls cost (its day sums), or None when nothing."""
    return _SESSION_SPENT.first(session_id)


def spent_per_person(person_ids: set[int] | None, firsts: dict[str, dt.date]) -> dict[int, dict[str, float]]:
    """What each person (of `person_ids`; everyone when None) spent from each period's first day on, summed
    from their day totals in one query: person id → period → USD."""
    totals = UsageDayTotal.objects.filter(day__gte=min(firsts.values()))
    if person_ids is not None:
        totals = totals.filter(person_key__in=person_ids)
    rows = totals.values("person_key").annotate(**{f"spent_{period}": Sum("cost", filter=Q(day__gte=first))
                                                    for period, first in firsts.items()}).order_by()
    return {row["person_key"]: {period: float(row[f"spent_{period}"] or 0) for period in firsts} for row in rows}
