"""Reads of the usage records and their daily rollups, scoped to the caller: anyone reads their own usage,
staff everyone's. Every query reads both tables and adds them up, so rolling records up changes no answer
(for periods that start and end on day boundaries of the usage time zone)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Count, Q, QuerySet, Sum

from agentserver.errors import Forbidden, NotFound
from usage_app.models import UsageDay, UsageRecord
from usage_app.periods import first_whole_day

GROUPINGS = ("day", "person", "model", "provider", "session")
# What each grouping groups by, in the records and in the rollups alike.
GROUP_FIELDS = {"day": ["day"], "person": ["person_key"], "model": ["provider_id", "model_id"],
                "provider": ["provider_id"], "session": ["session_id"]}
TOKENS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")
FAILED = ("error", "aborted")


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
    queryset = _filtered(UsageRecord.objects.all(), wanted, person_id, group)
    if wanted.since is not None:
        queryset = queryset.filter(at__gte=wanted.since)
    if wanted.until is not None:
        queryset = queryset.filter(at__lt=wanted.until)
    return queryset


def _days(wanted: UsageFilter, person_id, group) -> QuerySet:
    """The rolled-up days whose start lies in the period (a rolled-up day is not split)."""
    queryset = _filtered(UsageDay.objects.all(), wanted, person_id, group)
    if wanted.since is not None:
        queryset = queryset.filter(day__gte=first_whole_day(wanted.since))
    if wanted.until is not None:
        queryset = queryset.filter(day__lt=first_whole_day(wanted.until))
    return queryset


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


def usage_summary(*, viewer, wanted: UsageFilter, group_by: str | None) -> list[dict]:
    """Usage summed per `group_by` (GROUPINGS; None: one row for the whole selection), as the API renders
    it: most expensive first, by day in order of days."""
    person_id, group = check_usage_scope(viewer=viewer, wanted=wanted)
    fields = GROUP_FIELDS[group_by] if group_by else []
    merged: dict[tuple, dict] = {}
    for row in (_record_sums(_records(wanted, person_id, group), fields)
                + _day_sums(_days(wanted, person_id, group), fields)):
        key = tuple(row[field] for field in fields)
        total = merged.setdefault(key, {field: row[field] for field in fields})
        for name, value in row.items():
            if name not in fields:
                total[name] = (total.get(name) or 0) + (value or 0)
    rows = [_rendered(row, group_by) for row in merged.values() if row.get("calls")]
    if group_by == "person":
        _name_people(rows)
    if group_by == "day":
        return sorted(rows, key=lambda row: row["day"])
    return sorted(rows, key=lambda row: (-row["cost"], -row["calls"]))


def _rendered(row: dict, group_by: str | None) -> dict:
    key: dict = {}
    if group_by == "day":
        key["day"] = row["day"].isoformat()
    elif group_by == "person":
        key["personID"] = row["person_key"]
    elif group_by in ("model", "provider"):
        key["providerID"] = row["provider_id"]
        if group_by == "model":
            key["modelID"] = row["model_id"]
    elif group_by == "session":
        key["sessionID"] = row["session_id"]
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
