"""Reads of the usage, scoped to the caller: anyone reads their own usage, staff everyone's.

Where each answer comes from: the period's whole days (usage time zone) from the day sums, which count each
call as it ends — per person and model (UsageDayTotal, a few rows per person and day) or, for anything by
session, per session (UsageDay) — and a part of a day at either end of the period from the records. A call
counts once it has ended, not while in flight. So an answer is the same whichever table it comes from; the
rollup, which removes old records, changes none over whole days (a part of a rolled-up day counts nothing)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from functools import reduce
from operator import or_

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Sum, Value, When

from agentserver.errors import Forbidden, NotFound
from usage_app import charts
from usage_app.models import IN_FLIGHT, UsageDay, UsageDayTotal, UsageRecord
from usage_app.periods import day_start, first_whole_day
from usage_app.zone import usage_zone

# "day,person" and "day,model": each day split by person or by model (the admin dashboard's stacked chart).
GROUPINGS = ("day", "person", "model", "provider", "session", "day,person", "day,model")
# What each part of a grouping groups by, in the records and in the rollups alike.
PART_FIELDS = {"day": ["day"], "person": ["person_key"], "model": ["provider_id", "model_id"],
               "provider": ["provider_id"], "session": ["session_id", "person_key"]}  # a session is one person's
TOKENS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")
FAILED = ("error", "aborted")


def group_fields(group_by: str | None) -> list[str]:
    return [field for part in (group_by.split(",") if group_by else []) for field in PART_FIELDS[part]]


@dataclass(frozen=True)
class UsageFilter:
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    person: str | None = None      # a username
    group: str | None = None       # a group's name
    provider_id: str | None = None
    model_id: str | None = None
    session_id: str | None = None


class _EveryoneReader:
    """The server's own shell (`manage.py usage`), which reads everyone's usage. Not a user: no request carries
    it, so a route reads as the person who asked, and a missing viewer is an error rather than everyone."""

    def __repr__(self) -> str:
        return "EVERYONE"


EVERYONE = _EveryoneReader()


def check_usage_scope(*, viewer, wanted: UsageFilter) -> tuple[int | None, Group | None]:
    """Whose usage `viewer` (a user, or EVERYONE) may read with this filter: (the one person's id or None for
    everyone, the group). Someone who is not staff reads only their own; asking for another person or a group
    is a 403."""
    if viewer is None:
        raise TypeError("usage is read by a user or by EVERYONE, never by no one")
    staff = viewer is EVERYONE or viewer.is_staff
    person_id = None
    if wanted.person is not None:
        if not staff and wanted.person != viewer.get_username():
            raise Forbidden("Only staff read other people's usage")
        person = get_user_model().objects.filter(username=wanted.person).first()
        if person is None:
            raise NotFound(f"No person named {wanted.person!r}")
        person_id = person.id
    elif not staff:
        person_id = viewer.id
    group = None
    if wanted.group is not None:
        if not staff:
            raise Forbidden("Only staff read a group's usage")
        group = Group.objects.filter(name=wanted.group).first()
        if group is None:
            raise NotFound(f"No group named {wanted.group!r}")
    return person_id, group


def _filtered(queryset: QuerySet, wanted: UsageFilter, person_id: int | None, group: Group | None) -> QuerySet:
    if person_id is not None:
        queryset = queryset.filter(person_key=person_id)
    if group is not None:  # its members now (ids: the (person_key, at) index serves each)
        queryset = queryset.filter(person_key__in=list(group.user_set.values_list("id", flat=True)))
    for field, value in (("provider_id", wanted.provider_id), ("model_id", wanted.model_id),
                         ("session_id", wanted.session_id)):
        if value is not None:
            queryset = queryset.filter(**{field: value})
    return queryset


def _records(wanted: UsageFilter, person_id, group) -> QuerySet:
    queryset = _filtered(UsageRecord.objects.exclude(outcome=IN_FLIGHT), wanted, person_id, group)
    if wanted.since is not None:
        queryset = queryset.filter(at__gte=wanted.since)
    if wanted.until is not None:
        queryset = queryset.filter(at__lt=wanted.until)
    return queryset


def _day_sums_of(model, wanted: UsageFilter, person_id, group, first: dt.date | None,
                 after: dt.date | None) -> QuerySet:
    """The day sums (UsageDay or UsageDayTotal) of the days [first, after) (None: no bound)."""
    queryset = _filtered(model.objects.all(), wanted, person_id, group)
    if first is not None:
        queryset = queryset.filter(day__gte=first)
    if after is not None:
        queryset = queryset.filter(day__lt=after)
    return queryset


def _sources(wanted: UsageFilter, person_id, group, *, by_session: bool = False) -> list[QuerySet]:
    """The querysets whose sums, added up, answer `wanted`: the day sums (per session when the grouping or the
    filter names sessions, else the day totals) for the whole days of the period, the records for a part of a
    day at either end (or for a period within one day)."""
    first = first_whole_day(wanted.since) if wanted.since is not None else None
    after = wanted.until.astimezone(usage_zone()).date() if wanted.until is not None else None
    if first is not None and after is not None and first >= after:
        return [_records(wanted, person_id, group)]
    model = UsageDay if by_session or wanted.session_id is not None else UsageDayTotal
    sources = [_day_sums_of(model, wanted, person_id, group, first, after)]
    if first is not None and day_start(first) != wanted.since:
        sources.append(_records(replace(wanted, until=day_start(first)), person_id, group))
    if after is not None and day_start(after) != wanted.until:
        sources.append(_records(replace(wanted, since=day_start(after)), person_id, group))
    return sources


def _sums(queryset: QuerySet, fields: list[str]) -> list[dict]:
    return (_record_sums if queryset.model is UsageRecord else _day_sums)(queryset, fields)


def _record_sums(queryset: QuerySet, fields: list[str]) -> list[dict]:
    sums = {name: Sum(name) for name in (*TOKENS, "cost", "duration_ms")}
    return _summed(queryset, fields, calls=Count("id"), failed_calls=Count("id", filter=Q(outcome__in=FAILED)),
                   unpriced_calls=Count("id", filter=Q(priced=False)),
                   unreported_calls=Count("id", filter=Q(usage_reported=False)), **sums)


def _day_sums(queryset: QuerySet, fields: list[str]) -> list[dict]:
    sums = {name: Sum(name) for name in ("calls", "failed_calls", "unpriced_calls", "unreported_calls",
                                         *TOKENS, "cost", "duration_ms")}
    return _summed(queryset, fields, **sums)


def _summed(queryset: QuerySet, fields: list[str], **sums) -> list[dict]:
    if not fields:  # one total (values() without fields would mean every field)
        return [queryset.aggregate(**sums)]
    return list(queryset.values(*fields).annotate(**sums).order_by())


def usage_summary(*, viewer, wanted: UsageFilter, group_by: str | None, first: int | None = None) -> list[dict]:
    """Usage summed per `group_by` (GROUPINGS; None: one row for the whole selection), as the API renders
    it: most expensive first; by day in order of days (then most expensive first within a day). `first`: only
    the first N (a grouping without days), picked by the database when one table answers (a period of whole
    days), rather than thousands of sessions rendered for ten."""
    person_id, group = check_usage_scope(viewer=viewer, wanted=wanted)
    fields = group_fields(group_by)
    sources = _sources(wanted, person_id, group, by_session="session_id" in fields)
    if first is not None and fields and len(sources) == 1:
        # One table: the first N by cost alone (one sum), then all the sums of those N only.
        [source] = sources
        top = list(source.values(*fields).annotate(spent=Sum("cost")).order_by("-spent")[:first]
                   .values_list(*fields))
        chosen = reduce(or_, (Q(**dict(zip(fields, key, strict=True))) for key in top), Q(pk__in=[]))
        summed = _sums(source.filter(chosen), fields)
    else:
        summed = [row for source in sources for row in _sums(source, fields)]
    merged: dict[tuple, dict] = {}
    for row in summed:
        key = tuple(row[field] for field in fields)
        total = merged.setdefault(key, {field: row[field] for field in fields})
        for name, value in row.items():
            if name not in fields:
                total[name] = (total.get(name) or 0) + (value or 0)
    parts = group_by.split(",") if group_by else []
    rows = [_rendered(row, parts) for row in merged.values() if row.get("calls")]
    if "person" in parts or "session" in parts:
        _name_people(rows)
    rows.sort(key=lambda row: (-row["cost"], -row["calls"]))
    if "day" in parts:
        rows.sort(key=lambda row: row["day"])  # stable: the most expensive first within a day
    return rows[:first] if first is not None else rows


def cost_per_day(*, viewer, wanted: UsageFilter, split: str,
                 named: int = charts.NAMED_SERIES) -> tuple[list[str], list[dict]]:
    """The cost and calls of each day split by "person" or "model" (usage_summary's "day,person" and
    "day,model" added up the same way), with the `named` keys that cost most in the period by name and the
    rest together as charts.OTHERS. Two lean queries per table, the database doing the adding: the period's
    cost per key (to pick the named ones), then each day's cost and calls per named key and for the others
    (a few hundred rows as tuples, not a row per day and person). Returns (the labels, most expensive first;
    rows {day, label, cost, calls} in order of days)."""
    person_id, group = check_usage_scope(viewer=viewer, wanted=wanted)
    fields = PART_FIELDS[split]
    sources = _sources(wanted, person_id, group)
    totals: dict[tuple, float] = {}
    for queryset in sources:
        for *key, spent in (queryset.values(*fields).annotate(spent=Sum("cost")).order_by()
                            .values_list(*fields, "spent")):
            totals[tuple(key)] = totals.get(tuple(key), 0.0) + (spent or 0.0)
    order = sorted(totals, key=lambda key: (-totals[key], key))
    kept = order if len(order) <= named + 1 else order[:named]  # "others" is never one alone
    labels = [*_labels(split, kept), *([charts.OTHERS] if len(order) > len(kept) else [])]
    if not kept:
        return labels, []
    series = Case(*(When(Q(**dict(zip(fields, key, strict=True))), then=Value(index))
                    for index, key in enumerate(kept)), default=Value(len(kept)), output_field=IntegerField())
    merged: dict[tuple, dict] = {}
    for queryset in sources:
        calls = Count("id") if queryset.model is UsageRecord else Sum("calls")
        for day, index, spent, count in (queryset.annotate(series=series).values("day", "series")
                                         .annotate(spent=Sum("cost"), count=calls).order_by()
                                         .values_list("day", "series", "spent", "count")):
            row = merged.setdefault((day, index), {"day": day.isoformat(), "label": labels[index], "cost": 0.0,
                                                   "calls": 0})
            row["cost"] += spent or 0.0
            row["calls"] += count or 0
    return labels, [merged[key] for key in sorted(merged)]


def _labels(split: str, keys: list[tuple]) -> list[str]:
    if split == "model":
        return [charts.model_label({"providerID": provider, "modelID": model}) for provider, model in keys]
    if not keys:
        return []
    names = dict(get_user_model().objects.filter(id__in=[key for key, in keys]).values_list("id", "username"))
    return [charts.person_label({"personID": key, "person": names.get(key)}) for key, in keys]


def _rendered(row: dict, parts: list[str]) -> dict:
    key: dict = {}
    for part in parts:
        if part == "day":
            key["day"] = row["day"].isoformat()
        elif part == "person":
            key["personID"] = row["person_key"]
        elif part in ("model", "provider"):
            key["providerID"] = row["provider_id"]
            if part == "model":
                key["modelID"] = row["model_id"]
        elif part == "session":
            key["sessionID"] = row["session_id"]
            key["personID"] = row["person_key"]
    return {**key, "calls": row["calls"], "failedCalls": row["failed_calls"],
            "unpricedCalls": row["unpriced_calls"], "unreportedCalls": row["unreported_calls"],
            "tokens": {"input": row["input_tokens"], "output": row["output_tokens"],
                       "reasoning": row["reasoning_tokens"],
                       "cache": {"read": row["cache_read_tokens"], "write": row["cache_write_tokens"]}},
            "cost": round(float(row["cost"]), 10), "durationMs": row["duration_ms"]}


def _name_people(rows: list[dict]) -> None:
    names = dict(get_user_model().objects.filter(id__in=[row["personID"] for row in rows])
                 .values_list("id", "username"))
    for row in rows:
        row["person"] = names.get(row["personID"])  # None: the user was deleted since


ACCOUNT_DAYS = 30


def own_spend(*, person, today: dt.date | None = None) -> dict:
    """A person's own spend, for their account page (theirs even when they are staff): today's, and the last
    ACCOUNT_DAYS days' (usage time zone) day by day, as a chart, and by model."""
    today = today or dt.datetime.now(usage_zone()).date()
    days = charts.days_of(today - dt.timedelta(days=ACCOUNT_DAYS - 1), today)
    wanted = UsageFilter(since=day_start(days[0]), until=day_start(today + dt.timedelta(days=1)),
                         person=person.get_username())
    by_day = usage_summary(viewer=person, wanted=wanted, group_by="day")
    chart = charts.daily(by_day, days, "cost (USD)")
    return {"today": chart["series"][0]["costs"][-1], "total": sum(row["cost"] for row in by_day),
            "calls": sum(row["calls"] for row in by_day), "first_day": days[0], "last_day": today,
            "chart": chart, "by_model": usage_summary(viewer=person, wanted=wanted, group_by="model")}


def people_named(person_ids: set[int] | None, *, everyone: bool, persons: set[int],
                 group_ids: set[int]) -> dict[int, str]:
    """id → username of the people (of `person_ids`; any when None) under a budget: everyone when there is a
    budget for everyone, else the people with a budget of their own (`persons`) or in a group with one."""
    people = get_user_model().objects.all()
    if person_ids is not None:
        people = people.filter(id__in=person_ids)
    if not everyone:
        people = people.filter(Q(id__in=persons) | Q(groups__id__in=group_ids))
    return dict(people.values_list("id", "username").distinct())


def group_memberships(group_ids: set[int], person_ids: set[int]) -> dict[int, set[int]]:
    """person id → the ids of their groups among `group_ids`."""
    memberships: dict[int, set[int]] = {}
    for user_id, group_id in (get_user_model().groups.through.objects
                              .filter(group_id__in=group_ids, user_id__in=person_ids)
                              .values_list("user_id", "group_id")):
        memberships.setdefault(user_id, set()).add(group_id)
    return memberships


def groups_by_name() -> QuerySet:
    """The groups to filter by, by name (the dashboard's choices)."""
    return Group.objects.order_by("name")


def people_by_name() -> QuerySet:
    """The people to filter by, by username (the dashboard's choices)."""
    return get_user_model().objects.order_by("username")
