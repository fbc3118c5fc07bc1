"""The only code that writes usage_app's tables."""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from functools import cache

from django.db import connection

from agentserver.db import sql
from agentserver.workers.liveness import WORKER_ID
from usage_app.calls import ModelCall
from usage_app.models import IN_FLIGHT, UsageDay, UsageDayTotal, UsageRecord
from usage_app.zone import usage_zone

ENDED = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens", "cost",
         "priced", "usage_reported", "credential", "duration_ms", "outcome")


def _row(call: ModelCall) -> UsageRecord:
    fields = asdict(call)
    started_ms = fields.pop("started_ms")
    fields["person_key"] = fields["person_id"]
    at = dt.datetime.fromtimestamp(started_ms / 1000, tz=dt.UTC)
    return UsageRecord(at=at, day=at.astimezone(usage_zone()).date(), worker=WORKER_ID, **fields)


def record_start(call: ModelCall) -> None:
    """The call's record as its request goes out (outcome in_flight, nothing used yet), so that a worker's
    death cannot lose it: counted nowhere until it ends. A record already there is left as it is."""
    sql.insert(UsageRecord, [_row(call)], generated_pk=True, skip_conflicts=True)


def record_end(call: ModelCall) -> bool:
    """The call ended: its in-flight record takes what it used and how it ended, or, when there is none (a
    call whose start was not written), its record is inserted. A record that had ended already wins (an
    abort arriving after the step end; a call a worker that adopted the session ended as aborted): this
    ending is dropped. Whether it was counted; when it was, its day sums are added to (same transaction)."""
    row = _row(call)
    ended_values = [getattr(row, name) for name in ENDED]
    if connection.vendor == "postgresql":  # the record ended and both day sums added to: one round trip
        with connection.cursor() as cursor:
            cursor.execute(_ended_with_day_sums(), [*ended_values, call.call_id])
            if cursor.rowcount == 1:
                return True
    elif sql.update(UsageRecord, {"call_id": call.call_id, "outcome": IN_FLIGHT},
                    dict(zip(ENDED, ended_values, strict=True))) == 1:
        _add_to_day_sums(row)
        return True
    sql.insert(UsageRecord, [row], generated_pk=True, skip_conflicts=True)
    if row.pk is None:
        return False
    _add_to_day_sums(row)
    return True


def end_dead_calls(session_ids: list[str], alive) -> int:
    """The in-flight records of these sessions made by another worker that `alive` (a set of worker ids →
    those alive) says is dead: ended as aborted, with no usage reported (it died with the worker), and
    counted. How many."""
    dead = {}
    for row in UsageRecord.objects.filter(session_id__in=session_ids, outcome=IN_FLIGHT).exclude(worker=WORKER_ID):
        dead.setdefault(row.worker, []).append(row)
    for worker in alive(set(dead)):
        dead.pop(worker, None)
    ended = 0
    for row in (row for rows in dead.values() for row in rows):
        row.outcome, row.usage_reported = "aborted", False
        if sql.update(UsageRecord, {"call_id": row.call_id, "outcome": IN_FLIGHT},
                      {"outcome": row.outcome, "usage_reported": False}) == 1:
            _add_to_day_sums(row)
            ended += 1
    return ended


DAY_SUMS = ("calls", "failed_calls", "unpriced_calls", "unreported_calls", "input_tokens", "output_tokens",
            "reasoning_tokens", "cache_read_tokens", "cache_write_tokens", "cost", "duration_ms")
DAY_KEYS = {UsageDay: ("day", "person_key", "session_id", "provider_id", "model_id"),
            UsageDayTotal: ("day", "person_key", "provider_id", "model_id")}


@cache
def _day_sum_upsert(model, source: str | None = None) -> str:
    """INSERT … ON CONFLICT DO UPDATE adding to the row of the call's key (SQLite and PostgreSQL alike),
    spelt out once per table; its values bound, or selected from `source` (a WITH query's name)."""
    quote, table = connection.ops.quote_name, connection.ops.quote_name(model._meta.db_table)
    key = DAY_KEYS[model]
    extra = ("person_id",) if model is UsageDay else ()
    names = [quote(name) for name in (*key, *extra, *DAY_SUMS)]
    values = (f"SELECT {', '.join(names)} FROM {source}" if source
              else f"VALUES ({', '.join(['%s'] * len(names))})")
    added = ", ".join(f"{quote(name)} = {table}.{quote(name)} + EXCLUDED.{quote(name)}" for name in DAY_SUMS)
    return (f"INSERT INTO {table} ({', '.join(names)}) {values} "
            f"ON CONFLICT ({', '.join(quote(name) for name in key)}) DO UPDATE SET {added}")


@cache
def _ended_with_day_sums() -> str:
    """PostgreSQL: the in-flight record's UPDATE, and the day sums' upserts fed by the row it returns, as one
    statement (data-modifying WITH); its row count is 1 when the record was in flight. Parameters: ENDED's
    values, then the call id."""
    quote = connection.ops.quote_name
    record = quote(UsageRecord._meta.db_table)
    assignments = ", ".join(f"{quote(name)} = %s" for name in ENDED)
    counted = ("1 AS calls, CASE WHEN outcome IN ('error', 'aborted') THEN 1 ELSE 0 END AS failed_calls, "
               "CASE WHEN priced THEN 0 ELSE 1 END AS unpriced_calls, "
               "CASE WHEN usage_reported THEN 0 ELSE 1 END AS unreported_calls, "
               + ", ".join(quote(name) for name in DAY_SUMS[4:]))
    by_session, total = (_day_sum_upsert(model, source="ended") for model in (UsageDay, UsageDayTotal))
    return (f"WITH ended AS (UPDATE {record} SET {assignments} WHERE call_id = %s AND outcome = '{IN_FLIGHT}' "
            f"RETURNING day, person_key, session_id, provider_id, model_id, person_id, {counted}), "
            f"by_session AS ({by_session}) {total}")


def _add_to_day_sums(row: UsageRecord) -> None:
    """One ended call added to its day's sums per session (UsageDay) and per person and model (UsageDayTotal),
    in the caller's transaction."""
    day = connection.ops.adapt_datefield_value(row.day)
    sums = [1, int(row.outcome in ("error", "aborted")), int(not row.priced), int(not row.usage_reported),
            row.input_tokens, row.output_tokens, row.reasoning_tokens, row.cache_read_tokens,
            row.cache_write_tokens, float(row.cost), row.duration_ms]
    with connection.cursor() as cursor:
        cursor.execute(_day_sum_upsert(UsageDay), [day, row.person_key, row.session_id, row.provider_id,
                                                   row.model_id, row.person_id, *sums])
        cursor.execute(_day_sum_upsert(UsageDayTotal), [day, row.person_key, row.provider_id, row.model_id, *sums])


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
