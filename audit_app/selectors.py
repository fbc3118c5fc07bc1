"""Reading the audit log, for staff only (the API and the admin check who asks; these take the filters)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass, replace

from django.db.models import (
    BigIntegerField,
    ExpressionWrapper,
    F,
    Max,
    Q,
    QuerySet,
    TextField,
    Value,
)
from django.db.models.functions import Concat

from agentserver.errors import Forbidden
from audit_app.models import AuditRecord

MAX_LIMIT = 500
# Free text first looks among this many newest positions (below the cursor), walking them in order.
RECENT_POSITIONS = 50_000


@dataclass(frozen=True)
class AuditFilters:
    person: str | None = None        # a user id or a username
    action: str | None = None        # exact, or a prefix ending in "." ("token.")
    object: str | None = None        # "type" or "type:id"
    session: str | None = None
    outcome: str | None = None
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None
    q: str | None = None             # free text in the details, the object id or the actor's name


def filtered(filters: AuditFilters) -> QuerySet[AuditRecord]:
    rows = AuditRecord.objects.all()
    if filters.person:
        rows = rows.filter(actor_person=int(filters.person)) if filters.person.isdigit() else rows.filter(
            actor_name=filters.person)
    if filters.action:
        rows = rows.filter(action__startswith=filters.action) if filters.action.endswith(".") else rows.filter(
            action=filters.action)
    if filters.object:
        kind, _, object_id = filters.object.partition(":")
        rows = rows.filter(object_type=kind, **({"object_id": object_id} if object_id else {}))
    if filters.session:
        rows = rows.filter(session=filters.session)
    if filters.outcome:
        rows = rows.filter(outcome=filters.outcome)
    # Positions are given in time order (audit_app/chain.py), so a time range is a range of ids: found by the
    # time index at its two ends, then walked by the primary key like every other page.
    if filters.since:
        first = AuditRecord.objects.filter(time__gte=filters.since).order_by("time").values_list("id", flat=True)[:1]
        rows = rows.filter(id__gte=first[0]) if first else rows.none()
    if filters.until:
        after = AuditRecord.objects.filter(time__gte=filters.until).order_by("time").values_list("id", flat=True)[:1]
        if after:
            rows = rows.filter(id__lt=after[0])
    if filters.q:
        rows = rows.filter(_free_text(filters.q, details="details"))
    return rows


def _free_text(q: str, *, details: str) -> Q:
    return Q(**{f"{details}__icontains": q}) | Q(object_id=q) | Q(actor_name=q)


def check_reader(*, viewer) -> None:
    """Only staff read the audit log: Forbidden (403) for anyone else."""
    if not getattr(viewer, "is_staff", False):
        raise Forbidden("Only staff can read the audit log")


def audit_page(*, viewer, filters: AuditFilters, before_id: int | None = None,
               limit: int = 100) -> tuple[list[AuditRecord], int | None]:
    """Newest first: up to `limit` records older than `before_id`, and the id to continue before (or None).
    Staff only (check_reader)."""
    check_reader(viewer=viewer)
    rows = filtered(filters)
    if before_id is not None:
        rows = rows.filter(id__lt=before_id)
    count = min(limit, MAX_LIMIT) + 1
    if filters.q:
        page = _newest_free_text(filters, rows, count, before_id)
    else:
        page = list(rows.order_by("-id")[:count])
    more = len(page) > limit
    page = page[:limit]
    return page, (page[-1].id if more and page else None)


def _newest_free_text(filters: AuditFilters, rows: QuerySet[AuditRecord], count: int,
                      before_id: int | None) -> list[AuditRecord]:
    """The newest `count` records matching a free-text filter. The planner cannot tell a word found in every
    record from one found in a single record, and picks one plan for both: walking the log newest first is
    at once for the first and a walk through all 10 million records for the second; the trigram index is the
    reverse. So the newest RECENT_POSITIONS are walked first, matching the details without their index (a
    bounded walk); when they do not fill the page, matches are rare, and they are found through the indexes
    (the trigram index on the details, the object id's, the username's) and sorted, ordered by `id + 0` to
    keep the planner off the newest-first walk (docs/audit.md has the figures)."""
    upper = before_id if before_id is not None else (AuditRecord.objects.aggregate(top=Max("id"))["top"] or 0) + 1
    walked = (filtered(replace(filters, q=None)).filter(id__lt=upper, id__gte=upper - RECENT_POSITIONS)
              .annotate(details_walked=Concat("details", Value(""), output_field=TextField()))
              .filter(_free_text(filters.q, details="details_walked")))
    recent = list(walked.order_by("-id")[:count])
    if len(recent) == count:
        return recent
    position = ExpressionWrapper(F("id") + 0, output_field=BigIntegerField())
    return list(rows.order_by(position.desc())[:count])
