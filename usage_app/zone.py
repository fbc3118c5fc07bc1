"""The time zone of the usage calendar (AGENTSERVER_USAGE_TIME_ZONE): days in the reports and rollups, and
the day, week and month budgets reset on."""
from __future__ import annotations

import zoneinfo

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def usage_zone() -> zoneinfo.ZoneInfo:
    name = getattr(settings, "USAGE_TIME_ZONE", "UTC") or "UTC"
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as error:
        raise ImproperlyConfigured(f"AGENTSERVER_USAGE_TIME_ZONE: unknown time zone {name!r}") from error
