"""The only code that writes usage_app's tables."""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict

from django.db import connection
from django.db.models import Count, Max, Q, Sum

from agentserver.db import sql
from usage_app.calls import ModelCall
from usage_app.models import UsageDay, UsageRecord
from usage_app.zone import usage_zone


def record_insert(call: ModelCall) -> bool:
    """Insert the call's record; one with the same call id already there wins (a write retried after a
    crash, an abort arriving after the step end) and this one is dropped. Whether it was inserted."""
    fields = asdict(call)
    started_ms = fields.pop("started_ms")
    fields["person_key"] = fields["person_id"]
    at = dt.datetime.fromtimestamp(started_ms / 1000, tz=dt.timezone.utc)
    row = UsageRecord(at=at, day=at.astimezone(usage_zone()).date(), **fields)
    sql.insert(UsageRecord, [row], generated_pk=True, skip_conflicts=True)
    return row.pk is not None


ROLLED_SUMS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens",
               "cost", "duration_ms")
DAY_KEY = ("day", "person_key", "session_id", "provider_id", "model_id")


def roll_up_before(cutoff: dt.datetime) -> tuple[int, int]:
    """Sum the records that started before `cutoff` into UsageDay rows and delete them. The caller holds the
    transaction. Records written meanwhile (a higher id) are left for the next time."""
    last_id = UsageRecord.objects.filter(at__lt=cutoff).aggregate(last=Max("id"))["last"]
    if last_id is None:
        return 0, 0
    rolled = UsageRecord.objects.filter(at__lt=cutoff, id__lte=last_id)
    sums = {name: Sum(name) for name in ROLLED_SUMS}
    groups = list(rolled.values("day", "person_key", "person_id", "session_id", "provider_id", "model_id")
                  .annotate(calls=Count("id"), failed_calls=Count("id", filter=Q(outcome__in=("error", "aborted"))),
                            unpriced_calls=Count("id", filter=Q(priced=False)),
                            unreported_calls=Count("id", filter=Q(usage_reported=False)), **sums).order_by())
    days = {group["day"] for group in groups}
    existing = {tuple(getattr(row, name) for name in DAY_KEY): row
                for row in UsageDay.objects.select_for_update().filter(day__in=days)}
    added, changed = [], []
    counted = ("calls", "failed_calls", "unpriced_calls", "unreported_calls", *ROLLED_SUMS)
    for group in groups:
        key = tuple(group[name] for name in DAY_KEY)
        row = existing.get(key)
        if row is None:
            added.append(UsageDay(person_id=group["person_id"], **{name: group[name] for name in DAY_KEY},
                                  **{name: group[name] or 0 for name in counted}))
        else:
            for name in counted:
                setattr(row, name, getattr(row, name) + (group[name] or 0))
            changed.append(row)
    UsageDay.objects.bulk_create(added, batch_size=2000)
    UsageDay.objects.bulk_update(changed, list(counted), batch_size=2000)
    removed, _ = rolled.delete()
    return removed, len(added) + len(changed)


def tidy_after_rollup() -> None:
    """PostgreSQL: reclaim the deleted records and refresh the planner's statistics now (outside any
    transaction), rather than when autovacuum comes by: until then the indexes still point at every removed
    row, and a query by person read each of them."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in (UsageRecord, UsageDay):
            cursor.execute(f"VACUUM ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
