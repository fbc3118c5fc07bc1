"""`manage.py usage rollup` sums old records per day, person, session and model and removes them in one
transaction; the API and the reports answer the same before and after."""
import datetime as dt

import pytest
from django.core.management import CommandError, call_command

from tests.usage.conftest import add_record
from usage_app.models import UsageDay, UsageRecord


def usage(persona, **params):
    response = persona.get("/api/usage", params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def days_ago(days: int, hour: int = 12) -> dt.datetime:
    now = dt.datetime.now(dt.timezone.utc)
    return dt.datetime.combine(now.date() - dt.timedelta(days=days), dt.time(hour), tzinfo=dt.timezone.utc)


def test_old_records_are_rolled_up_per_day_and_every_answer_stays_the_same(alice, bob, staff):
    for days in (40, 40, 39):
        add_record(alice, at=days_ago(days), cost=1.0)
    add_record(alice, at=days_ago(40), cost=0.5, outcome="error", model_id="other")
    add_record(bob, at=days_ago(40), cost=2.0, session_id="ses_bob")
    add_record(alice, at=days_ago(1), cost=0.25)  # recent: stays a record
    groupings = ("day", "person", "model", "provider", "session", None)
    before = {g: usage(staff, **({"group_by": g} if g else {})) for g in groupings}
    alice_before = usage(alice, group_by="day")

    call_command("usage", "rollup", "--older-than", "30")

    assert UsageRecord.objects.count() == 1
    assert UsageDay.objects.count() == 4  # alice 40 days ago ×2 models, alice 39 days ago, bob 40 days ago
    assert {g: usage(staff, **({"group_by": g} if g else {})) for g in groupings} == before
    assert usage(alice, group_by="day") == alice_before
    [total] = before[None]
    assert (total["calls"], total["failedCalls"], total["cost"]) == (6, 1, 5.75)


def test_a_second_rollup_adds_to_the_days_already_rolled_up(alice):
    add_record(alice, at=days_ago(40), cost=1.0)
    call_command("usage", "rollup", "--older-than", "30")
    add_record(alice, at=days_ago(40, hour=13), cost=2.0)  # a record of that day written late
    call_command("usage", "rollup", "--older-than", "30")
    [day] = UsageDay.objects.all()
    assert (day.calls, day.cost, day.input_tokens) == (2, 3.0, 200)
    assert not UsageRecord.objects.exists()


def test_the_rollup_refuses_a_bad_age(alice):
    add_record(alice, at=days_ago(40))
    for age in ("0", "-3", "100000"):
        with pytest.raises(CommandError):
            call_command("usage", "rollup", "--older-than", age)
    assert UsageRecord.objects.count() == 1
