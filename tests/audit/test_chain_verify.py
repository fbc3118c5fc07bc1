"""The audit log's hash chain: `manage.py audit verify` accepts an untouched log (and one retention trimmed,
which leaves a record of what it removed), and names the exact record that was edited by hand, deleted, or
moved out of order in the database."""
import datetime
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from audit_app.actors import Actor
from audit_app.log import record
from audit_app.models import AuditRecord
from audit_app.retention import retention_apply
from audit_app.verify import verify

PERSON = Actor(person_id=7, name="eve", address="192.0.2.1", user_agent="curl/8")


def _write(count: int) -> list[int]:
    ids = []
    for number in range(count):
        with transaction.atomic():
            ids.append(record(action="token.created", actor=PERSON, object_type="token", object_id=number,
                              details={"name": f"t{number}", "note": "é\x00 and a NUL"}).id)
    return ids


def _by_hand(sql: str, params=()) -> None:
    """What someone with the database's password does: on PostgreSQL, as its superuser, with triggers off."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)


TABLE = AuditRecord._meta.db_table


def _verify_fails_at(record_id: int) -> str:
    with pytest.raises(CommandError) as refused:
        call_command("audit", "verify")
    assert f"record #{record_id}:" in str(refused.value), str(refused.value)
    verdict = verify()
    assert not verdict.ok and verdict.record_id == record_id
    return verdict.problem


def test_an_untouched_log_verifies(transactional_db):
    _write(300)
    out = io.StringIO()
    call_command("audit", "verify", stdout=out)
    assert "verifies: 300 records" in out.getvalue()


def test_verify_names_a_record_edited_by_hand(transactional_db):
    ids = _write(20)
    _by_hand(f"UPDATE {TABLE} SET details = %s WHERE id = %s", ['{"name":"someone else"}', ids[12]])
    assert "changed" in _verify_fails_at(ids[12])


def test_verify_names_a_record_whose_outcome_or_actor_was_edited(transactional_db):
    ids = _write(10)
    _by_hand(f"UPDATE {TABLE} SET actor_person = 1 WHERE id = %s", [ids[3]])
    assert "changed" in _verify_fails_at(ids[3])


def test_verify_names_where_a_record_was_deleted(transactional_db):
    ids = _write(20)
    _by_hand(f"DELETE FROM {TABLE} WHERE id = %s", [ids[5]])
    assert "removed" in _verify_fails_at(ids[6])


def test_verify_finds_the_newest_record_deleted(transactional_db):
    ids = _write(5)
    _by_hand(f"DELETE FROM {TABLE} WHERE id = %s", [ids[-1]])
    assert "newest" in _verify_fails_at(ids[-1])


def test_verify_names_a_record_moved_out_of_order(transactional_db):
    ids = _write(20)
    a, b = ids[8], ids[9]
    _by_hand(f"UPDATE {TABLE} SET id = -1 WHERE id = %s", [a])
    _by_hand(f"UPDATE {TABLE} SET id = %s WHERE id = %s", [a, b])
    _by_hand(f"UPDATE {TABLE} SET id = %s WHERE id = -1", [b])
    assert "out of order" in _verify_fails_at(a)


def test_retention_removes_old_records_says_so_and_the_chain_still_verifies(transactional_db):
    ids = _write(30)
    removed = retention_apply(older_than=datetime.timedelta(0))
    assert removed == 29  # the newest stays, so the chain goes on from it
    trail = AuditRecord.objects.order_by("-id").first()
    assert trail.action == "audit.retention"
    assert json.loads(trail.details)["removed"] == 29 and json.loads(trail.details)["lastId"] == ids[-2]
    _write(5)
    assert verify().ok, verify()
    # Removing the oldest remaining record by hand is not retention: no record vouches for it.
    _by_hand(f"DELETE FROM {TABLE} WHERE id = %s", [ids[-1]])
    assert "removed" in _verify_fails_at(trail.id)


def test_export_writes_one_json_line_per_record_since_a_date(transactional_db, tmp_path):
    _write(4)
    target = tmp_path / "audit.jsonl"
    call_command("audit", "export", "--since", "2000-01-01", "--output", str(target), stdout=io.StringIO())
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [line["object"]["id"] for line in lines] == ["0", "1", "2", "3"]
    assert lines[0]["actor"]["name"] == "eve" and lines[0]["details"]["name"] == "t0"
    future = tmp_path / "none.jsonl"
    call_command("audit", "export", "--since", "2999-01-01", "--output", str(future), stdout=io.StringIO())
    assert future.read_text() == ""
