"""GET /api/usage: anyone reads their own usage, staff everyone's; filters, groupings and formats; bad input
is a 400 in the spec's shape."""
import csv
import datetime as dt
import io
import json

from django.contrib.auth.models import Group

from tests.usage.conftest import add_record

NOV_10 = dt.datetime(2026, 11, 10, 12, tzinfo=dt.timezone.utc)
NOV_11 = dt.datetime(2026, 11, 11, 9, tzinfo=dt.timezone.utc)


def usage(persona, **params):
    response = persona.get("/api/usage", params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_anonymous_callers_are_refused(anon):
    assert anon.get("/api/usage").status_code == 401


def test_a_person_reads_only_their_own_usage(alice, bob):
    add_record(alice, at=NOV_10, cost=1.0)
    add_record(bob, at=NOV_10, cost=2.0, input_tokens=7)
    [total] = usage(bob)
    assert total["calls"] == 1 and total["cost"] == 2.0 and total["tokens"]["input"] == 7
    assert [row["personID"] for row in usage(bob, group_by="person")] == [bob.user.id]


def test_a_person_asking_for_someone_elses_usage_is_refused(alice, bob):
    add_record(alice, at=NOV_10)
    for params in ({"person": "alice"}, {"group": "finance"}):
        response = bob.get("/api/usage", params=params)
        assert response.status_code == 403, response.text
        assert response.json()["name"] == "ForbiddenError"
    assert bob.get("/api/usage", params={"person": "bob"}).status_code == 200


def test_staff_read_everyones_usage_grouped_by_person(alice, bob, staff):
    add_record(alice, at=NOV_10, cost=1.0)
    add_record(alice, at=NOV_11, cost=1.0)
    add_record(bob, at=NOV_11, cost=0.5)
    rows = usage(staff, group_by="person")
    assert [(row["person"], row["calls"], row["cost"]) for row in rows] == [("alice", 2, 2.0), ("bob", 1, 0.5)]
    [only_bob] = usage(staff, person="bob")
    assert only_bob["calls"] == 1


def test_staff_filter_by_group(alice, bob, staff):
    group = Group.objects.create(name="finance")
    bob.user.groups.add(group)
    add_record(alice, at=NOV_10)
    add_record(bob, at=NOV_10, cost=3.0)
    [row] = usage(staff, group="finance", group_by="person")
    assert row["person"] == "bob" and row["cost"] == 3.0
    assert staff.get("/api/usage", params={"group": "nobody"}).status_code == 404
    assert staff.get("/api/usage", params={"person": "nobody"}).status_code == 404


def test_the_period_takes_iso_dates_date_times_and_milliseconds(alice):
    add_record(alice, at=NOV_10)
    add_record(alice, at=NOV_11)
    assert usage(alice, since="2026-11-11")[0]["calls"] == 1
    assert usage(alice, until="2026-11-11")[0]["calls"] == 1
    assert usage(alice, since="2026-11-10T12:00:00Z", until="2026-11-10T12:00:01Z")[0]["calls"] == 1
    assert usage(alice, since=str(int(NOV_11.timestamp() * 1000)))[0]["calls"] == 1
    assert usage(alice, since="2026-11-12") == []
    assert usage(alice, since="2026-11-11", until="2026-11-10") == []  # an empty period
    assert usage(alice, since="0001-01-01T00:00:00+01:00", until="9999-12-31")[0]["calls"] == 2


def test_usage_groups_by_day_model_provider_and_session(alice):
    add_record(alice, at=NOV_10, model_id="big", cost=2.0, session_id="ses_a")
    add_record(alice, at=NOV_11, model_id="small", cost=1.0, session_id="ses_b")
    add_record(alice, at=NOV_11, model_id="small", provider_id="other", cost=0.25, session_id="ses_b")
    assert [(r["day"], r["calls"]) for r in usage(alice, group_by="day")] == [("2026-11-10", 1), ("2026-11-11", 2)]
    assert [(r["providerID"], r["modelID"], r["cost"]) for r in usage(alice, group_by="model")] == [
        ("fake", "big", 2.0), ("fake", "small", 1.0), ("other", "small", 0.25)]
    assert [(r["providerID"], r["calls"]) for r in usage(alice, group_by="provider")] == [("fake", 2), ("other", 1)]
    assert [(r["sessionID"], r["calls"]) for r in usage(alice, group_by="session")] == [("ses_a", 1), ("ses_b", 2)]
    assert usage(alice, provider="other")[0]["calls"] == 1
    assert usage(alice, model="big", session="ses_a")[0]["calls"] == 1


def test_failed_and_unpriced_calls_are_counted_apart(alice):
    add_record(alice, at=NOV_10, outcome="error", cost=0.0, input_tokens=0, output_tokens=0)
    add_record(alice, at=NOV_10, outcome="aborted")
    add_record(alice, at=NOV_10, priced=False, cost=0.0)
    [row] = usage(alice)
    assert (row["calls"], row["failedCalls"], row["unpricedCalls"]) == (3, 2, 1)


def test_usage_exports_as_csv_and_json_lines(alice):
    add_record(alice, at=NOV_10, model_id="big", cost=2.0)
    add_record(alice, at=NOV_11, model_id="small", cost=1.0)
    response = alice.get("/api/usage", params={"group_by": "model", "format": "csv"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [(r["modelID"], r["calls"], float(r["cost"])) for r in rows] == [("big", "1", 2.0), ("small", "1", 1.0)]
    assert rows[0]["inputTokens"] == "100"
    response = alice.get("/api/usage", params={"group_by": "day", "format": "jsonl"})
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line["day"] for line in lines] == ["2026-11-10", "2026-11-11"]
    empty = alice.get("/api/usage", params={"group_by": "day", "format": "csv", "since": "2030-01-01"})
    assert empty.text.splitlines()[0].startswith("day,calls,")


def test_bad_input_is_a_400_in_the_spec_shape(alice):
    for params in ({"since": "yesterday"}, {"until": "2026-13-01"}, {"group_by": "color"}, {"format": "xml"},
                   {"session": "not-a-session"}, {"since": "9" * 15}, {"until": "x" * 70}):
        response = alice.get("/api/usage", params=params)
        assert response.status_code == 400, (params, response.text)
        body = response.json()
        assert body["name"] == "BadRequestError" and body["data"]["kind"] == "Query", body


def test_the_document_describes_the_usage_route(alice):
    operation = alice.get("/doc").json()["paths"]["/api/usage"]["get"]
    assert operation["operationId"] == "v2:usage.list"
    assert {p["name"] for p in operation["parameters"]} >= {"since", "until", "person", "group", "group_by", "format"}
    assert "text/csv" in operation["responses"]["200"]["content"]
