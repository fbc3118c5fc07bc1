"""AGENTSERVER_USAGE_TIME_ZONE: an unknown zone is refused at start-up; days and periods follow the zone."""
import datetime as dt
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.conftest import ROOT
from usage_app import selectors
from usage_app.budgets import period_bounds
from usage_app.zone import usage_zone


def test_an_unknown_time_zone_stops_the_server_at_start_up():
    env = {**os.environ, "AGENTSERVER_USAGE_TIME_ZONE": "Mars/Olympus_Mons"}
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode != 0
    assert "unknown time zone 'Mars/Olympus_Mons'" in result.stderr


def test_usage_zone_refuses_an_unknown_zone(settings):
    settings.USAGE_TIME_ZONE = "Not/A_Zone"
    with pytest.raises(ImproperlyConfigured):
        usage_zone()


def test_days_and_periods_follow_the_zone(settings, db):
    from django.contrib.auth import get_user_model

    from tests.usage.conftest import add_record

    settings.USAGE_TIME_ZONE = "Asia/Tokyo"  # UTC+9
    person = get_user_model().objects.create_user(username="kenji")
    add_record(person, at=dt.datetime(2026, 11, 10, 20, 0, tzinfo=dt.timezone.utc))  # 11-11 05:00 in Tokyo
    [row] = selectors.usage_summary(viewer=selectors.EVERYONE, wanted=selectors.UsageFilter(), group_by="day")
    assert row["day"] == "2026-11-11"
    start, end = period_bounds("week", dt.datetime(2026, 11, 15, 16, 0, tzinfo=dt.timezone.utc))  # Mon 01:00
    assert start.isoformat() == "2026-11-16T00:00:00+09:00" and end.isoformat() == "2026-11-23T00:00:00+09:00"
    start, end = period_bounds("month", dt.datetime(2026, 12, 31, 16, 0, tzinfo=dt.timezone.utc))
    assert start.isoformat() == "2027-01-01T00:00:00+09:00" and end.isoformat() == "2027-02-01T00:00:00+09:00"
