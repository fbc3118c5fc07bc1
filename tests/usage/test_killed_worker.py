"""A worker killed with SIGKILL while a model call streams: the step it had completed is counted once (not
again by the worker that adopts the turn); the call that was cut is not lost: its record, written in flight
when the request went out, is ended as aborted (no usage reported: that died with the process) by the worker
that adopts the session, once; and the call the adopting worker makes again is counted once. The day totals
equal the records' sums throughout."""
import signal

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import FAST, Remote
from tests.runner.test_turns_survive_a_kill import _finished
from tests.usage.conftest import assert_totals_match_records, records

STEP_USAGE = {"input": 1000, "output": 10, "reasoning": 0, "cache_read": 0, "cache_write": 0}
CUT_USAGE = {"input": 7000, "output": 700, "reasoning": 0, "cache_read": 0, "cache_write": 0}
AGAIN_USAGE = {"input": 3000, "output": 30, "reasoning": 0, "cache_read": 0, "cache_write": 0}


def test_a_worker_killed_mid_call_counts_no_call_twice_and_loses_none(alice, llm, server_factory):
    first = server_factory(FAST)
    a = Remote(alice, first.url)
    session_id = a.post("/session", params={"directory": str(alice.repo)}, json={"title": "killed"}).json()["id"]
    (alice.repo / "README.md").write_text("the readme\n")
    llm.script(Reply(tool_calls=[("read", {"filePath": str(alice.repo / "README.md")})], usage=STEP_USAGE),
               Reply(text=" ".join(f"w{i}" for i in range(300)), delay=0.1, usage=CUT_USAGE),
               Reply(text="The readme says hello.", usage=AGAIN_USAGE))
    assert a.post(f"/session/{session_id}/prompt_async", json=text_prompt("read it")).status_code == 204

    def streaming_the_second_call():
        texts = [p.get("text", "") for m in a.get(f"/session/{session_id}/message").json()
                 if m["info"]["role"] == "assistant" for p in m["parts"]]
        return any(len(text) > 20 for text in texts)

    wait_until(streaming_the_second_call, timeout=30)
    # The first step's, committed with it; the second call's, written as its request went out.
    assert [r.outcome for r in records(session_id=session_id, in_flight=True)] == ["completed", "in_flight"]
    assert_totals_match_records()  # a call in flight is counted nowhere yet
    first.stop(signal.SIGKILL)

    second = server_factory(FAST)
    b = Remote(alice, second.url)
    messages = wait_until(lambda: _finished(b, session_id), timeout=60, interval=0.2)
    assistants = [m["info"] for m in messages if m["info"]["role"] == "assistant"]
    assert [a["finish"] for a in assistants] == ["tool-calls", "stop"]
    assert not any("error" in a for a in assistants)
    assert len(llm.requests) == 3  # the read step, the cut call, the call made again

    counted = records(session_id=session_id, in_flight=True)
    [cut] = [r for r in counted if r.outcome == "aborted"]  # exactly one record of the cut call
    assert (cut.input_tokens, cut.output_tokens, cut.cost, cut.usage_reported) == (0, 0, 0.0, False)
    # Its step was removed to be made again (runtime/resume.py): the call made again has a message of its own.
    assert cut.message_id not in {a["id"] for a in assistants}
    assert [(r.message_id, r.input_tokens, r.output_tokens, r.outcome) for r in counted if r is not cut] == [
        (assistants[0]["id"], 1000, 10, "completed"), (assistants[1]["id"], 3000, 30, "completed")]
    assert [r.cost for r in counted if r is not cut] == [a["cost"] for a in assistants]
    total = b.get("/api/usage", params={"session": session_id}).json()["data"]
    assert len(total) == 1 and total[0]["calls"] == 3 and total[0]["failedCalls"] == 1
    assert total[0]["unreportedCalls"] == 1
    assert total[0]["tokens"]["input"] == 4000 and total[0]["tokens"]["output"] == 40
    assert total[0]["cost"] == round(sum(a["cost"] for a in assistants), 10)
    assert_totals_match_records()
    by_day = b.get("/api/usage", params={"group_by": "day"}).json()["data"]  # from the day totals
    assert [(row["calls"], row["failedCalls"], row["cost"]) for row in by_day] == [
        (3, 1, round(sum(a["cost"] for a in assistants), 10))]


def test_only_a_dead_workers_calls_in_flight_are_ended_and_each_once(alice):
    """The adopting worker's sweep (usage_app.services.do_end_dead_calls): a call in flight on a live worker
    (this one) is left to it; a dead worker's is ended as aborted and counted once, a second sweep finds none."""
    import datetime as dt
    import subprocess

    from agentserver.workers import liveness
    from tests.usage.conftest import add_record, assert_totals_match_records
    from usage_app.models import UsageRecord
    from usage_app.services import do_end_dead_calls

    gone = subprocess.Popen(["true"])
    gone.wait()
    now = dt.datetime.now(dt.UTC)
    add_record(alice, at=now, call_id="cal_live", session_id="ses_swept", outcome="in_flight")
    add_record(alice, at=now, call_id="cal_dead", session_id="ses_swept", outcome="in_flight")
    add_record(alice, at=now, call_id="cal_elsewhere", session_id="ses_other", outcome="in_flight")
    UsageRecord.objects.filter(call_id__in=["cal_dead", "cal_elsewhere"]).update(
        worker=f"{liveness.MACHINE}:{gone.pid}:dead")

    assert do_end_dead_calls(session_ids=["ses_swept"]) == 1
    assert do_end_dead_calls(session_ids=["ses_swept"]) == 0
    outcomes = dict(UsageRecord.objects.values_list("call_id", "outcome"))
    assert outcomes == {"cal_live": "in_flight", "cal_dead": "aborted", "cal_elsewhere": "in_flight"}
    assert not UsageRecord.objects.get(call_id="cal_dead").usage_reported
    assert_totals_match_records()
