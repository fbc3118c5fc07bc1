"""A call's in-flight record and its end written at the same moment (a call cancelled while the insert of its
start runs; the end then goes out on another connection): the end waits for the start's row and ends it,
rather than finding no row to end, then finding the key taken, and leaving the record in flight for ever."""
import datetime as dt
import threading
import time
from dataclasses import replace

from tests.runner.conftest import wait_until
from tests.usage.conftest import assert_totals_match_records


def _waiting_on_a_lock() -> bool:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0] > 0


def test_a_calls_end_written_while_its_start_commits_ends_it_once(alice):
    from django.db import connection, transaction

    from usage_app.calls import ModelCall
    from usage_app.models import UsageDay, UsageRecord
    from usage_app.services import do_record_call, do_record_start

    user = alice.user
    call = ModelCall(
        call_id="cal_race", started_ms=int(dt.datetime.now(dt.UTC).timestamp() * 1000), person_id=user.id,
        session_id="ses_race", message_id="msg_race", agent="build", purpose="step", provider_id="fake",
        model_id="fake-model", input_tokens=100, output_tokens=20, reasoning_tokens=0, cache_read_tokens=0,
        cache_write_tokens=0, cost=0.5, priced=True, usage_reported=True, credential="config", duration_ms=10,
        outcome="aborted")
    start = replace(call, input_tokens=0, output_tokens=0, cost=0.0, usage_reported=False, duration_ms=0,
                    outcome="in_flight")
    start_written, may_commit, failures = threading.Event(), threading.Event(), []

    def in_thread(work):
        def run():
            try:
                work()
            except Exception as error:  # noqa: BLE001 (reported below)
                failures.append(error)
            finally:
                connection.close()
        return threading.Thread(target=run)

    def write_start() -> None:
        with transaction.atomic():
            do_record_start(call=start)
            start_written.set()
            may_commit.wait(10)

    def write_end() -> None:
        with transaction.atomic():
            do_record_call(call=call)

    starting = in_thread(write_start)
    starting.start()
    assert start_written.wait(10)
    ending = in_thread(write_end)
    ending.start()
    if connection.vendor == "postgresql":  # the end waits on the start's uncommitted key
        wait_until(_waiting_on_a_lock, timeout=10)
    else:
        time.sleep(0.5)  # SQLite: one writer at a time; the end waits for the start's transaction
    may_commit.set()
    starting.join(15)
    ending.join(15)
    assert not failures
    record = UsageRecord.objects.get(call_id="cal_race")
    assert (record.outcome, record.input_tokens, record.cost, record.usage_reported) == ("aborted", 100, 0.5, True)
    assert list(UsageDay.objects.values_list("calls", "failed_calls", "cost")) == [(1, 1, 0.5)]
    assert_totals_match_records()
