"""A worker killed between a change and its audit record leaves neither: the test holds the chain head's row
lock (PostgreSQL), so the worker's share of a session stops inside its transaction, after the share is
written and before its record; the worker is then killed with SIGKILL. Once the lock is released the database
has neither the share nor its record, the chain verifies, and the same share made by a worker left alone has
both. PostgreSQL only: SQLite has one writer at a time for the whole transaction, so nothing can stop it
between the two (and its journal rolls an interrupted transaction back whole)."""
import os
import signal
import threading
import time

import httpx
import psycopg
import pytest
from django.db import connection

from audit_app.models import AuditRecord, ChainHead
from audit_app.verify import verify
from sessions_app.models import Share
from tests.conftest import database_url_for

pytestmark = pytest.mark.scaled


def _session(client: httpx.Client, persona) -> str:
    response = client.post("/session", params={"directory": str(persona.repo)}, json={})
    assert response.status_code == 200, response.text
    return response.json()["id"]


def _share(client: httpx.Client, session_id: str, answers: list) -> None:
    try:
        answers.append(client.post(f"/session/{session_id}/share").status_code)
    except httpx.HTTPError as error:
        answers.append(type(error).__name__)


def _backend_waiting_on_the_head(timeout: float = 30) -> int:
    """The pid of the PostgreSQL backend blocked on the chain head's row lock."""
    head = ChainHead._meta.db_table
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock' AND query LIKE %s", [f"%{head}%FOR UPDATE%"])
            row = cursor.fetchone()
        if row:
            return row[0]
        time.sleep(0.05)
    raise AssertionError("no worker came to wait on the chain head")


def _gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
            if cursor.fetchone() is None:
                return True
        time.sleep(0.05)
    return False


def test_a_worker_killed_inside_the_transaction_leaves_neither_the_change_nor_its_record(server_factory, alice):
    worker = server_factory()
    client = httpx.Client(base_url=worker.url, headers={"Authorization": f"Bearer {alice.token}"}, timeout=60)
    try:
        completed, interrupted = _session(client, alice), _session(client, alice)
        assert client.post(f"/session/{completed}/share").status_code == 200
        answers: list = []
        with psycopg.connect(database_url_for(connection.settings_dict)) as holder:
            holder.execute(f"SELECT seq FROM {ChainHead._meta.db_table} WHERE id = 1 FOR UPDATE")
            sharing = threading.Thread(target=_share, args=(client, interrupted, answers))
            sharing.start()
            backend = _backend_waiting_on_the_head()
            # Inside the worker's transaction: its share row is written, its record not yet.
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND locktype = 'transactionid' "
                               "AND granted AND mode = 'ExclusiveLock'", [backend])
                assert cursor.fetchone()[0] >= 1
            os.killpg(worker.process.pid, signal.SIGKILL)
            worker.process.wait(10)
            sharing.join(30)
            holder.rollback()
        assert answers and answers[0] != 200
        assert _gone(backend)
    finally:
        client.close()
    assert not Share.objects.filter(session_id=interrupted).exists()
    assert not AuditRecord.objects.filter(session=interrupted).exists()
    assert Share.objects.filter(session_id=completed).exists()
    assert list(AuditRecord.objects.filter(session=completed).values_list("action", flat=True)) == ["session.shared"]
    verdict = verify()
    assert verdict.ok, str(verdict)

    again = server_factory()
    with httpx.Client(base_url=again.url, headers={"Authorization": f"Bearer {alice.token}"}, timeout=60) as client:
        assert client.post(f"/session/{interrupted}/share").status_code == 200
    assert Share.objects.filter(session_id=interrupted).exists()
    assert list(AuditRecord.objects.filter(session=interrupted).values_list("action", flat=True)) == [
        "session.shared"]
    verdict = verify()
    assert verdict.ok, str(verdict)
