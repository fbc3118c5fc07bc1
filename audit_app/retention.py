"""Retention, the one way records leave the log: the records older than a cutoff are deleted in one
transaction that also writes a record saying what it removed (how many, the positions, and the last removed
record's hash, which anchors the chain: audit_app/verify.py accepts the first remaining record on its word).
On PostgreSQL the delete runs with the session-local setting the trigger lets through (migration 0002)."""
from __future__ import annotations

import datetime

from django.db import transaction
from django.utils import timezone

from audit_app import store
from audit_app.actors import Actor
from audit_app.log import record
from audit_app.verify import RETENTION


def retention_apply(*, older_than: datetime.timedelta, actor: Actor | None = None) -> int:
    """Remove the records older than `older_than`; returns how many. The newest record always stays."""
    cutoff = timezone.now() - older_than
    with transaction.atomic():
        removed = store.remove_older_than(cutoff)
        if removed is None:
            return 0
        count, first_id, last_id, last_hash = removed
        record(action=RETENTION, actor=actor or Actor.system("audit retention"), object_type="audit",
               details={"removed": count, "firstId": first_id, "lastId": last_id, "lastHash": last_hash,
                        "olderThan": cutoff.isoformat()})
    return count
