"""A worker taken for dead while it was alive (paused past its heartbeat, its host's clock or network
stalled) had its call in flight ended as aborted by a sweep; when it comes back and its call ends, the call's
true ending replaces the sweep's, once, and the day sums take back what the sweep counted: the call is
counted once, with what it used. Another worker's ending of the same call id cannot replace it."""
import datetime as dt
from dataclasses import replace

import pytest

from tests.usage.conftest import assert_totals_match_records


def _call(person_id: int, **changes):
    from usage_app.calls import ModelCall

    call = ModelCall(
        call_id="cal_paused", started_ms=int(dt.datetime.now(dt.UTC).timestamp() * 1000), person_id=person_id,
        session_id="ses_paused", message_id="msg_paused", agent="build", purpose="step", provider_id="fake",
        model_id="fake-model", input_tokens=0, output_tokens=0, reasoning_tokens=0, cache_read_tokens=0,
        cache_write_tokens=0, cost=0.0, priced=True, usage_reported=False, credential="config", duration_ms=0,
        outcome="in_flight")
    return replace(call, **changes)


def _sums(session_id: str) -> tuple:
    from usage_app.models import UsageDay

    row = UsageDay.objects.get(session_id=session_id)
    return (row.calls, row.failed_calls, row.unpriced_calls, row.unreported_calls, row.input_tokens,
            row.output_tokens, round(row.cost, 6))


def _swept(worker: str) -> int:
    from django.db import transaction

    from usage_app import store

    with transaction.atomic():
        return store.end_calls_in_flight([worker])


@pytest.mark.parametrize("outcome", ["completed", "error"])
def test_the_true_ending_replaces_the_sweeps_and_is_counted_once(alice, outcome):
    from usage_app.models import UsageRecord
    from usage_app.services import do_record_call, do_record_start
    from usage_app.store import WORKER_ID

    start = _call(alice.user.id)
    do_record_start(call=start)
    assert _swept(WORKER_ID) == 1  # this worker taken for dead
    swept = UsageRecord.objects.get(call_id="cal_paused")
    assert (swept.outcome, swept.ended_by, swept.usage_reported) == ("aborted", "sweep", False)
    assert _sums("ses_paused") == (1, 1, 0, 1, 0, 0, 0.0)
    assert_totals_match_records()

    ended = replace(start, input_tokens=1200, output_tokens=300, cost=0.25, usage_reported=True, duration_ms=900,
                    outcome=outcome)
    do_record_call(call=ended)
    record = UsageRecord.objects.get(call_id="cal_paused")
    assert (record.outcome, record.ended_by, record.input_tokens, record.cost, record.usage_reported) == (
        outcome, "worker_after_sweep", 1200, 0.25, True)
    assert _sums("ses_paused") == (1, 1 if outcome == "error" else 0, 0, 0, 1200, 300, 0.25)
    assert_totals_match_records()

    # once: a second ending (and a second sweep) change nothing
    do_record_call(call=replace(ended, input_tokens=5, outcome="aborted"))
    assert _swept(WORKER_ID) == 0
    assert UsageRecord.objects.get(call_id="cal_paused").input_tokens == 1200
    assert _sums("ses_paused") == (1, 1 if outcome == "error" else 0, 0, 0, 1200, 300, 0.25)
    assert_totals_match_records()


def test_an_unpriced_call_stays_counted_once_as_unpriced(alice):
    from usage_app.services import do_record_call, do_record_start
    from usage_app.store import WORKER_ID

    start = _call(alice.user.id, priced=False)
    do_record_start(call=start)
    assert _swept(WORKER_ID) == 1
    assert _sums("ses_paused") == (1, 1, 1, 1, 0, 0, 0.0)
    do_record_call(call=replace(start, input_tokens=10, output_tokens=2, usage_reported=True, outcome="completed"))
    assert _sums("ses_paused") == (1, 0, 1, 0, 10, 2, 0.0)
    assert_totals_match_records()


def test_another_workers_ending_does_not_replace_the_sweeps(alice):
    """Only the worker that made the call ends it after a sweep: the record names it, and the ending of any
    other worker (none should exist: a call id is made by its worker) is dropped."""
    from usage_app.models import UsageRecord
    from usage_app.services import do_record_call

    start = _call(alice.user.id)
    UsageRecord.objects.create(
        call_id=start.call_id, at=dt.datetime.now(dt.UTC), day=dt.date.today(), person_id=alice.user.id,
        person_key=alice.user.id, session_id=start.session_id, message_id=start.message_id, agent="build",
        purpose="step", provider_id="fake", model_id="fake-model", credential="config", outcome="in_flight",
        usage_reported=False, worker="elsewhere:1:gone")
    assert _swept("elsewhere:1:gone") == 1
    do_record_call(call=replace(start, input_tokens=50, usage_reported=True, outcome="completed"))
    record = UsageRecord.objects.get(call_id=start.call_id)
    assert (record.outcome, record.ended_by, record.input_tokens) == ("aborted", "sweep", 0)
    assert _sums("ses_paused") == (1, 1, 0, 1, 0, 0, 0.0)
    assert_totals_match_records()
