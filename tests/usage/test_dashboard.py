"""The admin's usage dashboard over HTTP: staff only, bad filters a clear 400 (never a 500), the split per day
by person or model in the API too (scoped: a person reads only their own), and the charting library served
by this server from where it ships, with no collecting step."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import Group

from tests.usage.charts import DASHBOARD, api_rows, spend, today
from tests.web.conftest import sign_in_form
from usage_app.charts import CHART_JS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def staff_browser(server, transactional_db):
    """An admin signed in through the form, as a browser."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user(username="boss", password="boss-password", is_staff=True)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        assert sign_in_form(client, "boss", "boss-password").status_code == 302
        yield client


def test_anyone_not_staff_is_sent_to_the_admins_sign_in(server, alice, anon):
    answer = anon.get(DASHBOARD)
    assert answer.status_code == 302 and answer.headers["location"].startswith("/admin/login/?next=")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert sign_in_form(client, "alice", "alice-password").status_code == 302
        answer = client.get(DASHBOARD)
    assert answer.status_code == 302 and answer.headers["location"].startswith("/admin/login/")
    # A token is no way into the admin either.
    assert alice.get(DASHBOARD).status_code == 302


@pytest.mark.parametrize("query, message", [
    ({"first": "yesterday"}, "Enter a valid date"),
    ({"first": "2026-11-10", "last": "2026-11-01"}, "The period runs from a day to a later one, 366 days at most"),
    ({"first": "2024-01-01", "last": "2026-01-01"}, "366 days at most"),
    ({"person": "nobody"}, "Select a valid choice"),
    ({"group": "no-such-group"}, "Select a valid choice"),
    ({"split": "colour"}, "Select a valid choice"),
    ({"model": "m" * 256}, "at most 255 characters"),
])
def test_bad_filters_are_a_400_that_says_what_is_wrong(staff_browser, alice, query, message):
    answer = staff_browser.get(DASHBOARD, params=query)
    assert answer.status_code == 400, answer.text
    assert message in answer.text
    assert 'id="usage-dashboard-chart"' not in answer.text


def test_the_dashboard_answers_for_an_empty_period_and_names_the_dates(staff_browser, alice):
    answer = staff_browser.get(DASHBOARD, params={"first": "2026-02-01", "last": "2026-02-28"})
    assert answer.status_code == 200
    assert "0 model calls, <strong>$0.0000</strong> from 2026-02-01 to 2026-02-28 (UTC)" in answer.text
    assert '"days": ["2026-02-01"' in answer.text and '"2026-02-28"], "series": []' in answer.text


def test_the_api_splits_days_by_person_or_model_and_a_person_sees_only_their_own(alice, bob):
    spend(alice, days_ago=1, cost=1.0, model="big")
    spend(alice, days_ago=1, cost=0.25, model="small")
    spend(bob, days_ago=1, cost=2.0, model="big")
    yesterday = (today() - dt.timedelta(days=1)).isoformat()
    rows = api_rows(alice, group_by="day,model")
    assert [(r["day"], r["modelID"], r["cost"]) for r in rows] == [(yesterday, "big", 1.0), (yesterday, "small", 0.25)]
    assert [(r["person"], r["calls"]) for r in api_rows(bob, group_by="day,person")] == [("bob", 1)]
    assert [r["person"] for r in api_rows(alice, group_by="session")] == ["alice"]
    assert alice.get("/api/usage", params={"group_by": "day,colour"}).status_code == 400
    csv_text = alice.get("/api/usage", params={"group_by": "day,person", "format": "csv"}).text
    assert csv_text.splitlines()[0].startswith("day,personID,person,calls,")


def test_the_group_filter_limits_who_is_near_a_budget(staff_browser, alice, bob):
    from usage_app.models import Budget

    Group.objects.create(name="finance").user_set.add(bob.user)
    Budget.objects.create(scope="everyone", period="month", amount="10")
    spend(alice, days_ago=0, cost=1.0)
    spend(bob, days_ago=0, cost=3.0)
    everyone = staff_browser.get(DASHBOARD).text
    assert everyone.index("<td>bob</td>") < everyone.index("<td>alice</td>")
    finance = staff_browser.get(DASHBOARD, params={"group": "finance"}).text
    assert "<td>bob</td>" in finance and "<td>alice</td>" not in finance


def test_the_charting_library_is_served_from_where_it_ships(anon):
    shipped = (ROOT / "usage_app" / "static" / CHART_JS).read_bytes()
    answer = anon.get(f"/static/{CHART_JS}")
    assert answer.status_code == 200 and answer.content == shipped
    assert answer.headers["content-type"].startswith(("text/javascript", "application/javascript"))
    assert b"Chart.js v4.6.1" in shipped[:100]
    assert anon.get("/static/admin/css/base.css").status_code == 200  # the admin's own, no collectstatic run
    for missing in ("/static/usage_app/nothing.js", "/static/../server/settings.py", "/static/usage_app/"):
        assert anon.get(missing).status_code == 404


def test_the_charts_days_are_the_configured_time_zones(server_factory, settings, transactional_db):
    from django.contrib.auth import get_user_model

    from tests.usage.conftest import add_record

    settings.USAGE_TIME_ZONE = "Pacific/Kiritimati"  # UTC+14: this process writes the records' days too
    zoned = server_factory({"AGENTSERVER_USAGE_TIME_ZONE": "Pacific/Kiritimati"})
    people = get_user_model().objects
    people.create_user(username="boss", password="boss-password", is_staff=True)
    add_record(people.create_user(username="tarawa"), at=dt.datetime(2026, 11, 28, 12, tzinfo=dt.UTC), cost=1.5)
    with httpx.Client(base_url=zoned.url, timeout=60) as client:
        assert sign_in_form(client, "boss", "boss-password").status_code == 302
        on_the_29th = client.get(DASHBOARD, params={"first": "2026-11-29", "last": "2026-11-29"}).text
        on_the_28th = client.get(DASHBOARD, params={"first": "2026-11-28", "last": "2026-11-28"}).text
    assert "1 model call, <strong>$1.5000</strong> from 2026-11-29 to 2026-11-29 (Pacific/Kiritimati)" in on_the_29th
    assert '"series": [{"label": "tarawa", "costs": [1.5]}]' in on_the_29th
    assert "0 model calls" in on_the_28th


def test_the_exports_take_the_admins_cookie_only_from_this_servers_own_pages(staff_browser, alice):
    spend(alice, days_ago=0, cost=1.0)
    page = staff_browser.get(DASHBOARD).text
    export = page.split('id="usage-exports"')[1].split('href="')[1].split('"')[0].replace("&amp;", "&")
    own = staff_browser.get(export, headers={"Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 200 and own.headers["content-type"].startswith("text/csv")
    assert "alice" in own.text
    elsewhere = staff_browser.get(export, headers={"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
    assert elsewhere.status_code in (401, 403) and "alice" not in elsewhere.text
