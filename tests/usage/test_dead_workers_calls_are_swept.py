"""A model call a worker's death cut on a session nobody prompts again (its title's call, made beside a turn that
has ended, so no lease is left to adopt) is not left in flight: every worker's janitor sweeps the calls of dead
workers (usage_app.services.do_end_dead_calls), and one of them ends it as aborted, with no usage reported,
once, within a few janitor rounds. A live worker's call in flight is never touched, and several workers
sweeping at once end each call once."""
import datetime as dt
import signal
import subprocess
import threading
import time

from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import FAST, Remote
from tests.runner.test_turns_survive_a_kill import _finished
from tests.usage.conftest import add_record, assert_totals_match_records, records

JANITOR_SECONDS = 2  # FAST's lease of 4 s: the janitor goes round every 2 s


def _title_record(session_id: str):
    from usage_app.models import UsageRecord

    return UsageRecord.objects.filter(session_id=session_id, purpose="title").first()


def _session_with_a_title_in_flight(remote) -> str:
    session_id = remote.post("/session", params={"directory": str(remote.repo)}, json={}).json()["id"]
    assert remote.post(f"/session/{session_id}/prompt_async", json=text_prompt("hello")).status_code == 204
    wait_until(lambda: _finished(remote, session_id), timeout=30, interval=0.2)
    wait_until(lambda: _title_record(session_id) is not None, timeout=30, interval=0.2)
    return session_id


def test_a_dead_workers_title_call_is_ended_by_another_workers_sweep(alice, llm, server_factory):
    llm.hold_titles()  # the turns end; their titles' calls stay in flight
    try:
        doomed, survivor = server_factory(FAST), server_factory(FAST)
        cut = _session_with_a_title_in_flight(Remote(alice, doomed.url))
        b = Remote(alice, survivor.url)
        kept = _session_with_a_title_in_flight(b)
        assert _title_record(cut).outcome == _title_record(kept).outcome == "in_flight"
        assert _title_record(cut).worker != _title_record(kept).worker
        assert len(llm.requests) == 4  # two steps, two titles
        doomed.stop(signal.SIGKILL)

        killed_at = time.monotonic()
        wait_until(lambda: _title_record(cut).outcome != "in_flight", timeout=5 * JANITOR_SECONDS, interval=0.2)
        print(f"ended {time.monotonic() - killed_at:.1f} s after the kill")
        swept = _title_record(cut)
        assert (swept.outcome, swept.usage_reported, swept.input_tokens, swept.cost) == ("aborted", False, 0, 0.0)
        # The title's call runs beside the first step's: which one started first is not promised.
        assert sorted(r.purpose for r in records(session_id=cut, in_flight=True)) == ["step", "title"]
        assert_totals_match_records()
        total = b.get("/api/usage", params={"session": cut}).json()["data"]
        assert [(row["calls"], row["failedCalls"], row["unreportedCalls"]) for row in total] == [(2, 1, 1)]

        time.sleep(2 * JANITOR_SECONDS)  # more sweeps: the live worker's call stays its own
        assert _title_record(kept).outcome == "in_flight"
        assert _title_record(cut).outcome == "aborted"
    finally:
        llm.release_titles()
    wait_until(lambda: _title_record(kept).outcome == "completed", timeout=30, interval=0.2)
    assert b.get(f"/session/{kept}").json()["title"] != b.get(f"/session/{cut}").json()["title"]
    assert len(llm.requests) == 4  # nothing was made again: the swept session was not adopted
    assert {r.purpose: r.outcome for r in records(session_id=cut, in_flight=True)} == {"step": "completed",
                                                                                       "title": "aborted"}
    assert_totals_match_records()


def test_several_workers_sweeping_at_once_end_each_call_once(alice):
    from django.db import connection

    from agentserver.workers import liveness
    from usage_app.models import UsageRecord
    from usage_app.services import do_end_dead_calls

    gone = subprocess.Popen(["true"])
    gone.wait()
    now = dt.datetime.now(dt.UTC)
    dead = [f"cal_dead_{n}" for n in range(12)]
    for n, call_id in enumerate(dead):
        add_record(alice, at=now, call_id=call_id, session_id=f"ses_swept_{n % 3}", outcome="in_flight")
    add_record(alice, at=now, call_id="cal_live", session_id="ses_swept_0", outcome="in_flight")
    UsageRecord.objects.filter(call_id__in=dead).update(worker=f"{liveness.MACHINE}:{gone.pid}:dead")

    start, ended, failures = threading.Barrier(4), [], []

    def sweep() -> None:
        try:
            start.wait(10)
            ended.append(do_end_dead_calls())
        except Exception as error:  # noqa: BLE001 (reported below)
            failures.append(error)
        finally:
            connection.close()

    sweepers = [threading.Thread(target=sweep) for _ in range(4)]
    for thread in sweepers:
        thread.start()
    for thread in sweepers:
        thread.join(30)
    assert not failures
    assert len(ended) == 4 and sum(ended) == len(dead)  # each call ended by one of them
    outcomes = dict(UsageRecord.objects.values_list("call_id", "outcome"))
    assert outcomes == {**dict.fromkeys(dead, "aborted"), "cal_live": "in_flight"}
    assert do_end_dead_calls() == 0
    assert_totals_match_records()
