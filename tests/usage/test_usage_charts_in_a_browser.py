"""The usage charts in a real chromium: a person's own last 30 days on /account and the admin's dashboard, each
drawn by the vendored Chart.js (served by this server) with the numbers GET /api/usage gives for the same
filters; the dashboard's toggle and filters change them, its exports are the API's, and someone who is not
staff gets no dashboard. Screenshots go to test-artifacts/screenshots/ (scripts/screenshots.sh copies them)."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from tests.usage.charts import DASHBOARD, api_rows, period_of, spend
from tests.web.conftest import chromium, screenshot  # noqa: F401  (chromium: the browser fixture)
from usage_app.models import Budget

pytestmark = pytest.mark.timeout(240)

CHART_OF = """id => {
  const chart = Chart.getChart(document.getElementById(id));
  const canvas = chart.canvas, pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i]) painted++;
  return {labels: chart.data.labels, painted,
          datasets: chart.data.datasets.map(d => ({label: d.label, data: d.data}))};
}"""


@pytest.fixture
def page(chromium, server):  # noqa: F811
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.static_answers = []
    page.on("response", lambda r: "/static/" in r.url and page.static_answers.append((r.url, r.status)))
    yield page
    context.close()


@pytest.fixture
def stella(server, transactional_db):
    """An admin with a password (stella-password) and an API token."""
    from tests.conftest import make_persona

    persona = make_persona("stella", server.url, None, staff=True)
    yield persona
    persona.client.close()


def sign_in(page, server, username: str) -> None:
    page.goto(f"{server.url}/signin")
    page.fill("#id_username", username)
    page.fill("#id_password", f"{username}-password")
    page.click("#signin-form button[type=submit]")
    page.wait_for_load_state()


def chart_of(page, canvas_id: str) -> dict:
    page.wait_for_function(f"() => window.Chart && Chart.getChart(document.getElementById('{canvas_id}'))")
    return page.evaluate(CHART_OF, canvas_id)


def show(page) -> None:
    """Submit the dashboard's filters and wait for the page they give."""
    with page.expect_navigation():
        page.click("#usage-show")


def by_label(chart: dict) -> dict[str, list[float]]:
    return {dataset["label"]: dataset["data"] for dataset in chart["datasets"]}


def assert_drawn_as(chart: dict, rows: list[dict], label_of) -> None:
    """Each API row is its series' bar on its day, and nothing else is drawn."""
    series = by_label(chart)
    assert set(series) == {label_of(row) for row in rows}
    for row in rows:
        assert series[label_of(row)][chart["labels"].index(row["day"])] == pytest.approx(row["cost"])
    assert sum(map(sum, series.values())) == pytest.approx(sum(row["cost"] for row in rows))
    assert chart["painted"] > 1000, "the canvas is blank"


def test_the_account_page_draws_the_persons_own_last_30_days(page, server, alice, bob):
    spend(alice, days_ago=0, cost=1.25, model="small")
    spend(alice, days_ago=3, cost=0.5, model="big")
    spend(alice, days_ago=29, cost=0.125, model="big")
    spend(alice, days_ago=30, cost=9.0, model="big")  # before the 30 days
    spend(bob, days_ago=0, cost=7.0)
    Budget.objects.create(scope="everyone", period="day", amount="2")
    sign_in(page, server, "alice")
    page.goto(f"{server.url}/account")
    chart = chart_of(page, "usage-chart")

    assert len(chart["labels"]) == 30
    rows = api_rows(alice, group_by="day", **period_of(chart["labels"]))
    assert [row["cost"] for row in rows] == [0.125, 0.5, 1.25]
    assert_drawn_as(chart, rows, lambda row: "cost (USD)")
    [costs] = by_label(chart).values()
    assert costs.count(0) == 27  # the days without usage are drawn as zero
    today = page.locator("#usage-today")
    expect(today).to_contain_text("Today: $1.25")
    expect(today).to_contain_text("$1.88 in 3 model calls")
    by_model = api_rows(alice, group_by="model", **period_of(chart["labels"]))
    cells = page.locator("#usage-by-model tbody tr").all_inner_texts()
    assert [line.split("\t")[0] for line in cells] == [f"{r['providerID']}/{r['modelID']}" for r in by_model]
    assert "$0.6250" in cells[1]
    expect(page.locator("#usage-budgets")).to_contain_text("The daily budget for everyone: $1.25 of $2.00 spent")
    assert "7.00" not in page.locator("#usage").inner_text()  # bob's spend is not hers
    assert page.locator("#usage-dashboard-link").count() == 0
    assert page.static_answers and all(status == 200 for _, status in page.static_answers), page.static_answers
    screenshot(page.locator("#usage"), "usage-account")


def test_someone_not_staff_gets_no_dashboard(page, server, alice):
    spend(alice, days_ago=0, cost=1.0)
    sign_in(page, server, "alice")
    page.goto(f"{server.url}{DASHBOARD}")
    assert "/admin/login/" in page.url
    assert page.locator("#usage-dashboard-chart").count() == 0


def test_the_dashboard_stacks_spend_by_person_or_model_filters_and_exports(page, server, alice, bob, stella):
    spend(alice, days_ago=2, cost=1.0, model="big", session="ses_alice_1")
    spend(alice, days_ago=0, cost=0.5, model="small", session="ses_alice_1")
    spend(bob, days_ago=1, cost=2.0, model="big", session="ses_bob_1")
    spend(bob, days_ago=0, cost=0.75, model="small", session="ses_bob_2", tokens=(7, 3))
    Group.objects.create(name="finance").user_set.add(bob.user)
    Budget.objects.create(scope="everyone", period="day", amount="1")

    page.goto(f"{server.url}/admin/login/?next={DASHBOARD}")
    page.fill("#id_username", "stella")
    page.fill("#id_password", "stella-password")
    page.click("#login-form input[type=submit]")
    chart = chart_of(page, "usage-dashboard-chart")
    period = period_of(chart["labels"])
    assert len(chart["labels"]) == 30
    assert_drawn_as(chart, api_rows(stella, group_by="day,person", **period), lambda row: row["person"])
    expect(page.locator("#usage-total")).to_contain_text("4 model calls, $4.2500")
    sessions = api_rows(stella, group_by="session", **period)
    assert [r["sessionID"] for r in sessions] == ["ses_bob_1", "ses_alice_1", "ses_bob_2"]
    shown = page.locator("#usage-top-sessions tbody tr").all_inner_texts()
    assert [line.split("\t")[:3] for line in shown] == [[r["sessionID"], r["person"], str(r["calls"])]
                                                         for r in sessions]
    nearest = page.locator("#usage-nearest-budgets tbody tr").all_inner_texts()
    assert [line.split("\t")[:5] for line in nearest] == [["bob", "daily, everyone's", "$0.75", "$1.00", "75"],
                                                          ["alice", "daily, everyone's", "$0.50", "$1.00", "50"]]
    assert all(status == 200 for _, status in page.static_answers), page.static_answers
    page.set_viewport_size({"width": 1280, "height": 1050})
    screenshot(page, "usage-dashboard")

    with page.expect_download() as download:
        page.locator("#usage-exports li").first.get_by_text("CSV").click()
    exported = download.value.path().read_text()
    expected = stella.get("/api/usage", params={**period, "group_by": "day,person", "format": "csv"}).text
    assert exported == expected
    assert len(list(csv.DictReader(io.StringIO(exported)))) == 4

    page.select_option("#id_split", "model")
    show(page)
    chart = chart_of(page, "usage-dashboard-chart")
    assert_drawn_as(chart, api_rows(stella, group_by="day,model", **period),
                    lambda row: f"{row['providerID']}/{row['modelID']}")
    assert set(by_label(chart)) == {"fake/big", "fake/small"}

    page.select_option("#id_split", "person")
    page.select_option("#id_group", "finance")
    show(page)
    chart = chart_of(page, "usage-dashboard-chart")
    assert_drawn_as(chart, api_rows(stella, group_by="day,person", group="finance", **period),
                    lambda row: row["person"])
    assert set(by_label(chart)) == {"bob"}
    expect(page.locator("#usage-total")).to_contain_text("2 model calls, $2.7500")
    nearest = page.locator("#usage-nearest-budgets tbody tr").all_inner_texts()
    assert [line.split("\t")[0] for line in nearest] == ["bob"]
    with page.expect_download() as download:
        page.locator("#usage-exports li").first.get_by_text("JSON lines").click()
    lines = [json.loads(line) for line in download.value.path().read_text().splitlines()]
    assert lines == api_rows(stella, group_by="day,person", group="finance", **period)
    assert {line["person"] for line in lines} == {"bob"}

    page.select_option("#id_group", "")
    page.fill("#id_model", "small")
    show(page)
    chart = chart_of(page, "usage-dashboard-chart")
    assert_drawn_as(chart, api_rows(stella, group_by="day,person", model="small", **period),
                    lambda row: row["person"])
    expect(page.locator("#usage-total")).to_contain_text("2 model calls, $1.2500")

    page.fill("#id_model", "")
    page.fill("#id_provider", "nobody-provider")
    show(page)
    chart = chart_of(page, "usage-dashboard-chart")
    assert chart["datasets"] == []
    expect(page.locator("#usage-top-sessions")).to_contain_text("No usage in this period.")
