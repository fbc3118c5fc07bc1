"""Reading what the audit log holds, from the test's side of the shared database."""
from __future__ import annotations

import orjson

from audit_app.models import AuditRecord


def last_id() -> int:
    return AuditRecord.objects.order_by("-id").values_list("id", flat=True).first() or 0


def records_after(mark: int, **filters) -> list[AuditRecord]:
    return list(AuditRecord.objects.filter(id__gt=mark, **filters).order_by("id"))


def actions_after(mark: int, **filters) -> list[str]:
    return [row.action for row in records_after(mark, **filters)]


def details(row: AuditRecord) -> dict:
    return orjson.loads(row.details)
