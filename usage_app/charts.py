"""What the usage charts draw: every day of a period (a day without usage is a zero), one series per person or
model, the few that spent most named and the rest summed as "others". The pages hand it to
`usage-charts.js` as JSON; Chart.js (vendored, served from this server) draws it."""
from __future__ import annotations

import datetime as dt

# The static files the chart pages load (usage_app/static/; vendor/chart.js-*/README.md says where from).
CHART_JS = "usage_app/vendor/chart.js-4.6.1/chart.umd.min.js"
CHARTS = "usage_app/usage-charts.js"
NAMED_SERIES = 8
OTHERS = "others"


def days_of(first: dt.date, last: dt.date) -> list[dt.date]:
    return [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]


def person_label(row: dict) -> str:
    return row.get("person") or f"deleted person {row['personID']}"


def model_label(row: dict) -> str:
    return f"{row['providerID']}/{row['modelID']}"


def daily(rows: list[dict], days: list[dt.date], label: str) -> dict:
    """One series from rows grouped by day: the cost of every day of `days`, zero where none."""
    costs = {row["day"]: row["cost"] for row in rows}
    return {"days": [day.isoformat() for day in days],
            "series": [{"label": label, "costs": [costs.get(day.isoformat(), 0.0) for day in days]}]}


def stacked(labels: list[str], rows: list[dict], days: list[dt.date]) -> dict:
    """One series per label, in order, from rows {day, label, cost} (selectors.cost_per_day)."""
    index = {day.isoformat(): n for n, day in enumerate(days)}
    series = {label: [0.0] * len(days) for label in labels}
    for row in rows:
        series[row["label"]][index[row["day"]]] += row["cost"]
    return {"days": list(index), "series": [{"label": label, "costs": [round(cost, 10) for cost in costs]}
                                            for label, costs in series.items()]}
