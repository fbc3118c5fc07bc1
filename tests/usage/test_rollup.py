"""`manage.py usage rollup` removes old records in one transaction; their calls stay in the day sums (per
session, and per person and model), which counted each call as it ended: the API and the reports answer the
same before and after, for whole days."""
import datetime as dt

import pytest
from django.core.management import CommandError, call_command

from tests.usage.conftest import add_record, assert_totals_match_records
from usage_app.models import UsageDay, UsageRecord


def usage(persona, **params):
    response = persona.get("/api/usage", params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def days_ago(days: int, hour: int = 12) -> dt.datetime:
    now = dt.datetime.now(dt.timezone.utc)
    return dt.datetime.combine(now.date() - dt.timedelta(days=days), dt.time(hour), tzinfo=dt.timezone.utc)


def test_old_records_are_removed_and_every_answer_stays_the_same(alice, bob, staff):
    for days in (40, 40, 39):
        add_record(alice, at=days_ago(days), cost=1.0)
    add_record(alice, at=days_ago(40), cost=0.5, outcome="error", model_id="other")
    add_record(bob, at=days_ago(40), cost=2.0, session_id="ses_bob")
    add_record(alice, at=days_ago(1), cost=0.25)  # recent: stays a record
    groupings = ("day", "person", "model", "provider", "session", None)
    before = {g: usage(staff, **({"group_by": g} if g else {})) for g in groupings}
    alice_before = usage(alice, group_by="day")

    assert_totals_match_records()
    call_command("usage", "rollup", "--older-than", "30")

    assert UsageRecord.objects.count() == 1
    assert_totals_match_records()
    # alice 40 days ago ×2 models, alice 39 days ago, bob 40 days ago, alice yesterday: kept as they ended
    assert UsageDay.objects.count() == 5
    assert {g: usage(staff, **({"group_by": g} if g else {})) for g in groupings} == before
    assert usage(alice, group_by="day") == alice_before
    [total] = before[None]
    assert (total["calls"], total["failedCalls"], total["cost"]) == (6, 1, 5.75)


def test_a_record_of_a_rolled_up_day_written_late_is_counted_and_removed_the_next_time(alice):
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


def test_a_period_with_parts_of_days_adds_the_day_sums_to_the_records_of_those_parts(alice, bob, staff):
    """Whole days come from the day sums, a part of a day at either end from the records: every period
    answers what the records alone say, by person or by session alike."""
    for days, hour, cost in ((40, 6, 1.0), (40, 18, 2.0), (39, 3, 4.0), (3, 6, 8.0), (3, 18, 16.0), (2, 1, 32.0),
                             (2, 23, 64.0), (1, 12, 128.0)):
        add_record(alice, at=days_ago(days, hour), cost=cost)
    add_record(bob, at=days_ago(3, 12), cost=256.0, model_id="other")
    add_record(alice, at=days_ago(3, 7), cost=1000.0, outcome="in_flight")  # not ended: counted nowhere

    def cost(**params):
        return [(row.get("day"), row["cost"]) for row in usage(staff, **params)]

    # A part of the day at the start, whole days, a part at the end; within one day; days only.
    assert cost(since=days_ago(3, 12).isoformat(), until=days_ago(2, 12).isoformat()) == [(None, 16 + 256 + 32.0)]
    assert cost(since=days_ago(3, 12).isoformat(), until=days_ago(1, 0).isoformat(), group_by="day") == [
        (days_ago(3).date().isoformat(), 16 + 256.0), (days_ago(2).date().isoformat(), 96.0)]
    assert cost(since=days_ago(3, 5).isoformat(), until=days_ago(3, 13).isoformat()) == [(None, 8 + 256.0)]
    assert cost(since=days_ago(3, 0).isoformat(), until=days_ago(1, 0).isoformat()) == [(None, 8 + 16 + 256 + 96.0)]
    by_person = usage(staff, since=days_ago(40, 12).isoformat(), until=days_ago(2, 12).isoformat(),
                      group_by="person")
    assert [(row["person"], row["cost"]) for row in by_person] == [("bob", 256.0), ("alice", 2 + 4 + 8 + 16 + 32.0)]
    by_session = usage(staff, since=days_ago(40, 12).isoformat(), until=days_ago(2, 12).isoformat(),
                       group_by="session")
    assert [(row["sessionID"], row["person"], row["cost"]) for row in by_session] == [
        ("ses_usage_test", "bob", 256.0), ("ses_usage_test", "alice", 62.0)]

    assert cost(since=days_ago(40, 12).isoformat(), until=days_ago(39, 12).isoformat()) == [(None, 2 + 4.0)]
    call_command("usage", "rollup", "--older-than", "30")
    # Whole days answer as before; a part of a rolled-up day has no records left to count.
    assert cost(since=days_ago(40, 0).isoformat(), until=days_ago(38, 0).isoformat()) == [(None, 7.0)]
    assert cost(since=days_ago(41, 0).isoformat(), until=days_ago(39, 12).isoformat()) == [(None, 3.0)]
    assert cost(since=days_ago(40, 12).isoformat(), until=days_ago(39, 12).isoformat()) == []
    assert_totals_match_records()
