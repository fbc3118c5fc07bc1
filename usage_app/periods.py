"""Instants and calendar days of the usage calendar (usage_app.zone): what `since` and `until` take, and which
rolled-up days a period covers."""
from __future__ import annotations

import datetime as dt
import re

from usage_app.zone import usage_zone

MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: what a datetime holds


def parse_instant(value: str) -> dt.datetime:
    """An ISO date (midnight in the usage time zone), an ISO date-time (the zone's when it names none), or
    milliseconds since the epoch. ValueError for anything else."""
    value = value.strip()
    if re.fullmatch(r"\d{1,15}", value):
        ms = int(value)
        if ms > MAX_MS:
            raise ValueError("out of range")
        return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)
    if re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        return dt.datetime.combine(dt.date.fromisoformat(value), dt.time(), tzinfo=usage_zone())
    moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=usage_zone())


def first_whole_day(moment: dt.datetime) -> dt.date:
    """The first calendar day (usage zone) that starts at or after `moment`."""
    local = moment.astimezone(usage_zone())
    day = local.date()
    return day if local.time() == dt.time() else day + dt.timedelta(days=1)


def day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=usage_zone())
