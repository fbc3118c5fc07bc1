"""Retention, the one way records leave the log: the records older than a cutoff are deleted in one
transaction that also writes a record saying what it removed (how many, the positions, and the last removed
record's hash, which anchors the chain: audit_app/verify.py accepts the first remaining record on its word).
On PostgreSQL the delete runs with the session-local setting the trigger lets through (migration 0002)."""
from __future__ import annotations

import datetime

from django.db import connection, transaction
from django.utils import timezone

from audit_app.actors import Actor
from audit_app.log import record
from audit_app.models import AuditRecord
from audit_app.verify import RETENTION

ALLOW_DELETE = "SELECT set_config('agentserver.audit_retention', 'on', true)"


def retention_apply(*, older_than: datetime.timedelta, actor: Actor | None = None) -> int:
    """Remove the records older than `older_than`; returns how many. The newest record always stays."""
    cutoff = timezone.now() - older_than
    with transaction.atomic():
        newest = AuditRecord.objects.order_by("-id").values_list("id", flat=True).first()
        doomed = AuditRecord.objects.filter(time__lt=cutoff)
        if newest is not None:
            doomed = doomed.exclude(id=newest)
        last = doomed.order_by("-id").values_list("id", "hash").first()
        if last is None:
            return 0
        first_id = doomed.order_by("id").values_list("id", flat=True).first()
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(ALLOW_DELETE)
        # Positions up to the last doomed one: retention never leaves a hole in the middle of the chain.
        removed, _ = AuditRecord.objects.filter(id__lte=last[0]).delete()
        record(action=RETENTION, actor=actor or Actor.system("audit retention"), object_type="audit",
               details={"removed": removed, "firstId": first_id, "lastId": last[0], "lastHash": last[1],
                        "olderThan": cutoff.isoformat()})
    return removed
