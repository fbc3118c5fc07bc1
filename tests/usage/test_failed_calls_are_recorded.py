"""A call that ends in an error or an abort is recorded with that outcome and what it received; a provider
that reports no usage gives a record of zero tokens that says so."""
import threading

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle, wait_until
from tests.usage.conftest import (
    assert_totals_match_records,
    assistant_messages,
    records,
)


def test_a_provider_error_is_recorded_with_outcome_error(alice, llm, session_of):
    session = session_of(title="no title call")
    llm.script(Reply(error_status=400, error_message="bad request from provider"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("hello")).json()
    assert answer["info"]["error"]
    [record] = records()
    assert record.outcome == "error" and record.message_id == answer["info"]["id"]
    assert (record.input_tokens, record.output_tokens, record.cost) == (0, 0, 0.0)
    assert not record.usage_reported


def test_an_aborted_turn_is_recorded_with_outcome_aborted(alice, llm, session_of):
    session = session_of(title="no title call")
    llm.script(Reply(text=" ".join(f"tick{i}" for i in range(60)), delay=0.2))
    results = {}

    def prompt():
        results["answer"] = alice.post(f"/session/{session['id']}/message", json=text_prompt("slow")).json()

    thread = threading.Thread(target=prompt)
    thread.start()
    wait_until(lambda: any(p["type"] == "text" for m in assistant_messages(alice, session["id"]) for p in m["parts"]))
    assert alice.post(f"/session/{session['id']}/abort").json() is True
    thread.join(10)
    assert results["answer"]["info"]["error"]["name"] == "MessageAbortedError"
    [record] = records()
    assert record.outcome == "aborted" and record.message_id == results["answer"]["info"]["id"]
    assert record.duration_ms > 0
    assert [r.outcome for r in records(in_flight=True)] == ["aborted"]  # its in-flight record, ended once
    assert_totals_match_records()


def test_a_provider_reporting_no_usage_gives_zero_tokens_marked_unreported(alice, llm, session_of):
    session = session_of(title="no title call")
    llm.script(Reply(text="no usage here", usage=None))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("hello")).json()
    assert answer["info"]["tokens"]["input"] == 0
    [record] = records()
    assert record.outcome == "completed" and not record.usage_reported and record.priced
    assert (record.input_tokens, record.output_tokens, record.cost) == (0, 0, 0.0)


def test_a_retried_call_counts_each_attempt_that_reached_the_provider(alice, llm, session_of):
    session = session_of(title="no title call")
    llm.script(Reply(error_status=500, error_message="overloaded"), Reply(text="made it"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("hello")).json()
    assert answer["parts"][-2]["text"] == "made it" or any(p.get("text") == "made it" for p in answer["parts"])
    assert [r.outcome for r in records()] == ["error", "completed"]
    assert {r.message_id for r in records()} == {answer["info"]["id"]}
    assert len(records(in_flight=True)) == 2
    assert_totals_match_records()
    wait_idle(alice, session["id"])
