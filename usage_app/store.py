"""The only code that writes usage_app's tables."""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict

from usage_app.calls import ModelCall
from usage_app.models import UsageRecord


def record_insert(call: ModelCall) -> None:
    """Insert the call's record; one with the same call id already there wins (a write retried after a
    crash, an abort arriving after the step end) and this one is dropped."""
    fields = asdict(call)
    started_ms = fields.pop("started_ms")
    fields["person_key"] = fields["person_id"]
    UsageRecord.objects.bulk_create(
        [UsageRecord(at=dt.datetime.fromtimestamp(started_ms / 1000, tz=dt.timezone.utc), **fields)],
        ignore_conflicts=True)
