"""On PostgreSQL the application's own connection can neither change nor delete an audit record: a trigger
refuses UPDATE and DELETE; retention's delete alone goes through (with its transaction-local setting)."""
import datetime

import pytest
from django.db import DatabaseError, connection, transaction

from audit_app.log import record
from audit_app.models import AuditRecord
from audit_app.retention import retention_apply
from audit_app.verify import verify

pytestmark = pytest.mark.scaled


def _one() -> AuditRecord:
    with transaction.atomic():
        return record(action="auth.signin", object_type="user", object_id=1)


def test_the_trigger_refuses_an_update(transactional_db):
    row = _one()
    with pytest.raises(DatabaseError, match="cannot be changed or removed"), transaction.atomic():
        AuditRecord.objects.filter(id=row.id).update(outcome="failure")
    with pytest.raises(DatabaseError, match="UPDATE refused"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {AuditRecord._meta.db_table} SET details = '{{}}' WHERE id = %s", [row.id])
    assert AuditRecord.objects.get(id=row.id).outcome == "success"


def test_the_trigger_refuses_a_delete(transactional_db):
    row = _one()
    with pytest.raises(DatabaseError, match="DELETE refused"), transaction.atomic():
        AuditRecord.objects.filter(id=row.id).delete()
    assert AuditRecord.objects.filter(id=row.id).exists()


def test_retention_deletes_through_the_trigger_and_leaves_its_record(transactional_db):
    for _ in range(3):
        _one()
    assert retention_apply(older_than=datetime.timedelta(0)) == 2
    assert list(AuditRecord.objects.order_by("id").values_list("action", flat=True)) == [
        "auth.signin", "audit.retention"]
    assert verify().ok
    # The setting lasted only for retention's transaction.
    with pytest.raises(DatabaseError, match="DELETE refused"), transaction.atomic():
        AuditRecord.objects.all().delete()
