"""The admin's usage dashboard (staff only, inside the admin): spend per day stacked by person or by model,
the top sessions, the people nearest their budgets; filtered by period, group, person, provider and model;
exported as CSV or JSON lines through GET /api/usage with the same filters. Every number comes from the
selectors the API answers with, over records and rolled-up days alike."""
from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.http import HttpRequest
from django.template.response import TemplateResponse

from usage_app import charts, selectors
from usage_app.budgets import nearest_budgets
from usage_app.periods import day_start
from usage_app.zone import usage_zone

DEFAULT_DAYS = 30
MOST_DAYS = 366
TOP_SESSIONS = 10
SPLITS = ("person", "model")


class DashboardFilters(forms.Form):
    first = forms.DateField(label="From", widget=forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"}))
    last = forms.DateField(label="To", widget=forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"}))
    group = forms.ModelChoiceField(selectors.groups_by_name(), to_field_name="name", required=False,
                                   empty_label="every group")
    person = forms.ModelChoiceField(selectors.people_by_name(),
                                    to_field_name=get_user_model().USERNAME_FIELD, required=False,
                                    empty_label="everyone")
    provider = forms.CharField(max_length=255, required=False)
    model = forms.CharField(max_length=255, required=False)
    split = forms.ChoiceField(label="Stack by", choices=[(split, split) for split in SPLITS])

    def clean(self):
        cleaned = super().clean()
        first, last = cleaned.get("first"), cleaned.get("last")
        if first and last and not 0 <= (last - first).days < MOST_DAYS:
            raise forms.ValidationError(f"The period runs from a day to a later one, {MOST_DAYS} days at most.")
        return cleaned


def _defaults(query: dict, today: dt.date) -> dict:
    return {"first": (today - dt.timedelta(days=DEFAULT_DAYS - 1)).isoformat(), "last": today.isoformat(),
            "split": "person", **{name: value for name, value in query.items() if name in DashboardFilters.base_fields}}


def dashboard_view(request: HttpRequest) -> TemplateResponse:
    filters = DashboardFilters(_defaults(request.GET.dict(), dt.datetime.now(usage_zone()).date()))
    context = {**admin.site.each_context(request), "title": "Usage dashboard", "filters": filters,
               "chart_js": charts.CHART_JS, "charts_js": charts.CHARTS, "zone": usage_zone().key}
    if not filters.is_valid():
        return TemplateResponse(request, "admin/usage_app/dashboard.html", context, status=400)
    return TemplateResponse(request, "admin/usage_app/dashboard.html",
                            {**context, **dashboard_data(viewer=request.user, **filters.cleaned_data)})


def dashboard_data(*, viewer, first: dt.date, last: dt.date, group: Group | None, person, provider: str,
                   model: str, split: str) -> dict:
    wanted = selectors.UsageFilter(
        since=day_start(first), until=day_start(last + dt.timedelta(days=1)),
        person=person.get_username() if person else None, group=group.name if group else None,
        provider_id=provider or None, model_id=model or None)
    labels, per_day = selectors.cost_per_day(viewer=viewer, wanted=wanted, split=split)
    sessions = selectors.usage_summary(viewer=viewer, wanted=wanted, group_by="session", first=TOP_SESSIONS)
    return {"chart": charts.stacked(labels, per_day, charts.days_of(first, last)),
            "total_cost": sum(row["cost"] for row in per_day), "total_calls": sum(row["calls"] for row in per_day),
            "sessions": sessions, "nearest": nearest_budgets(viewer=viewer, wanted=wanted),
            "exports": _exports(wanted, first, last, split)}


def _exports(wanted: selectors.UsageFilter, first: dt.date, last: dt.date, split: str) -> list[dict]:
    """Links to GET /api/usage with the dashboard's filters (the admin's session cookie is accepted there
    from this server's own pages)."""
    query = {"since": first.isoformat(), "until": (last + dt.timedelta(days=1)).isoformat(),
             **{name: value for name, value in (("group", wanted.group), ("person", wanted.person),
                                               ("provider", wanted.provider_id), ("model", wanted.model_id))
                if value}}
    return [{"label": label, "links": [(name, "/api/usage?" + urlencode({**query, "group_by": group_by,
                                                                          "format": output}))
                                       for name, output in (("CSV", "csv"), ("JSON lines", "jsonl"))]}
            for label, group_by in ((f"per day and {split}", f"day,{split}"), ("per session", "session"))]
