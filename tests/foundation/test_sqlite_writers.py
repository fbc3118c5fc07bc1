"""SQLite writers of one process take turns on a lock (agentserver/db/sqlite/base.py): a second writer waits
for the first to commit instead of failing or sleeping in SQLite's busy handler, and a writer that waits
longer than the busy timeout still gets SQLite's own answer rather than a deadlock."""
import threading
import time

import pytest
from django.db import connection, transaction

from agentserver.db.sqlite.base import _writer
from agentserver.models import EventLog

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.embedded]  # the writer lock is SQLite's


def log_row(type: str) -> None:
    EventLog.objects.create(owner_id=424242, type=type, event_id=type, properties={}, time=0)


def in_thread(work) -> tuple[threading.Thread, list]:
    outcome: list = []

    def run():
        try:
            work()
            outcome.append("ok")
        except Exception as error:  # noqa: BLE001 — the test reads it
            outcome.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def holding_a_write_transaction(type: str) -> tuple[threading.Thread, list, threading.Event]:
    """A thread inside a write transaction (its row written, not committed) until the event is set."""
    holding = threading.Event()
    release = threading.Event()

    def hold():
        with transaction.atomic():
            log_row(type)
            holding.set()
            release.wait(10)

    thread, outcome = in_thread(hold)
    assert holding.wait(10)
    return thread, outcome, release


def test_a_second_writer_waits_for_the_first_to_commit_and_then_writes():
    first_thread, first_outcome, release = holding_a_write_transaction("first")
    assert _writer.locked(), "a write transaction holds the process's writer turn"
    second_thread, second_outcome = in_thread(lambda: log_row("second"))
    time.sleep(0.2)
    assert second_thread.is_alive(), "the second writer must wait for the first transaction"
    release.set()
    first_thread.join(10)
    second_thread.join(10)
    assert first_outcome == ["ok"] and second_outcome == ["ok"]
    order = list(EventLog.objects.filter(owner_id=424242).order_by("id").values_list("type", flat=True))
    assert order == ["first", "second"]


def test_the_turn_is_given_back_after_a_rollback_and_after_a_failed_statement():
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            log_row("rolled back")
            assert _writer.locked()
            raise RuntimeError("abort")
    assert not _writer.locked()
    with pytest.raises(Exception):
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO no_such_table VALUES (1)")
    assert not _writer.locked()
    thread, outcome = in_thread(lambda: log_row("after"))
    thread.join(10)
    assert outcome == ["ok"]
    assert list(EventLog.objects.filter(owner_id=424242).values_list("type", flat=True)) == ["after"]


def test_a_writer_waiting_past_the_busy_timeout_gets_sqlites_answer_not_a_deadlock():
    from agentserver.db.sqlite.base import DatabaseWrapper

    impatient_settings = {**connection.settings_dict, "OPTIONS": {**connection.settings_dict["OPTIONS"], "timeout": 0.3}}
    first_thread, _, release = holding_a_write_transaction("holder")
    impatient = DatabaseWrapper(impatient_settings)
    try:
        started = time.monotonic()
        with pytest.raises(Exception, match="locked"):
            with impatient.cursor() as cursor:
                cursor.execute("INSERT INTO agentserver_eventlog (owner_id, type, event_id, properties, time) "
                               "VALUES (424242, 'impatient', 'x', '{}', 0)")
        assert time.monotonic() - started < 5
    finally:
        impatient.close()
        release.set()
        first_thread.join(10)
