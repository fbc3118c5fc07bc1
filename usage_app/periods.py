"""Instants and calendar days of the usage calendar (usage_app.zone): what `since` and `until` take, and which
rolled-up days a period covers."""
from __future__ import annotations

import datetime as dt
import re

from usage_app.zone import usage_zone

EARLIEST = dt.datetime.min.replace(tzinfo=dt.timezone.utc) + dt.timedelta(days=2)
LATEST = dt.datetime.max.replace(tzinfo=dt.timezone.utc) - dt.timedelta(days=2)


def parse_instant(value: str) -> dt.datetime:
    """An ISO date (midnight in the usage time zone), an ISO date-time (the zone's when it names none), or
    milliseconds since the epoch (up to 13 digits), in UTC. ValueError for anything else. Instants at the
    ends of the calendar are taken as its ends (a zone's offset would carry them past year 1 or 9999)."""
    value = value.strip()
    if re.fullmatch(r"\d{1,13}", value):
        return dt.datetime.fromtimestamp(int(value) / 1000, tz=dt.timezone.utc)
    if re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        moment = dt.datetime.combine(dt.date.fromisoformat(value), dt.time())
    else:
        moment = dt.datetime.fromisoformat(re.sub(r"[zZ]$", "+00:00", value.replace("t", "T")))
    if not EARLIEST.replace(tzinfo=None) <= moment.replace(tzinfo=None) <= LATEST.replace(tzinfo=None):
        return EARLIEST if moment.year < 5000 else LATEST
    return (moment if moment.tzinfo else moment.replace(tzinfo=usage_zone())).astimezone(dt.timezone.utc)


def first_whole_day(moment: dt.datetime) -> dt.date:
    """The first calendar day (usage zone) that starts at or after `moment`."""
    local = moment.astimezone(usage_zone())
    day = local.date()
    return day if local.time() == dt.time() else day + dt.timedelta(days=1)


def day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=usage_zone())
