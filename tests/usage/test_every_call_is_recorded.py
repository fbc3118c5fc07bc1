"""Every model call of a turn (each step, a subagent's, the title's) is recorded once, attributed to the
person and session, with the tokens and cost the assistant message shows."""
from tests.fakes.fixtures import Reply
from tests.fakes.llm import TITLE_TEXT
from tests.runner.conftest import text_prompt, wait_idle, wait_until
from tests.usage.conftest import (
    assert_totals_match_records,
    assistant_messages,
    records,
)

# The fake's prices (tests/fakes/fixtures.py): $1 per million input tokens, $2 per million output tokens.
ONE_CALL_COST = (100 * 1.0 + 20 * 2.0) / 1_000_000


def test_a_turn_with_a_subagent_and_a_title_records_each_call_once(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("task", {"description": "look around", "prompt": "list files",
                                           "subagent_type": "general"})]),
               Reply(text="child says hello"),
               Reply(text="parent done"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("delegate"))
    wait_until(lambda: alice.get(f"/session/{session['id']}").json()["title"] == TITLE_TEXT)
    [child] = alice.get(f"/session/{session['id']}/children").json()
    wait_idle(alice, child["id"])
    wait_until(lambda: len(records()) == 4)

    parent_messages = assistant_messages(alice, session["id"])
    child_messages = assistant_messages(alice, child["id"])
    assert len(parent_messages) == 2 and len(child_messages) == 1
    by_message = {r.message_id: r for r in records() if r.message_id}
    assert len(by_message) == 3
    for message in parent_messages + child_messages:
        record = by_message[message["info"]["id"]]
        tokens = message["info"]["tokens"]
        assert (record.input_tokens, record.output_tokens, record.reasoning_tokens) == (
            tokens["input"], tokens["output"], tokens["reasoning"])
        assert (record.cache_read_tokens, record.cache_write_tokens) == (tokens["cache"]["read"],
                                                                          tokens["cache"]["write"])
        assert record.cost == message["info"]["cost"] == ONE_CALL_COST
        assert record.session_id == message["info"]["sessionID"]
        assert record.agent == message["info"]["agent"]
        assert record.outcome == "completed" and record.priced and record.usage_reported
    assert [r.purpose for r in records() if r.session_id == child["id"]] == ["subagent"]
    assert sorted(r.purpose for r in records() if r.session_id == session["id"]) == ["step", "step", "title"]
    [title] = [r for r in records() if r.purpose == "title"]
    assert (title.input_tokens, title.output_tokens, title.cost) == (100, 20, ONE_CALL_COST)
    assert all(r.person_id == r.person_key == alice.user.id for r in records())
    assert all((r.provider_id, r.model_id) == ("fake", "fake-model") for r in records())
    assert all(r.credential == "config" for r in records())  # the key is options.apiKey of alice's config
    assert len({r.call_id for r in records()}) == 4
    assert not records(in_flight=True, outcome="in_flight")
    assert_totals_match_records()


def test_a_compaction_is_recorded_as_one(alice, llm, session_of):
    session = session_of(title="no title call")
    alice.post(f"/session/{session['id']}/message", json=text_prompt("hello"))
    wait_idle(alice, session["id"])
    llm.script(Reply(text="the summary"))
    response = alice.post(f"/session/{session['id']}/summarize", json={"providerID": "fake", "modelID": "fake-model"})
    assert response.status_code == 200, response.text
    wait_idle(alice, session["id"])
    summary = next(m for m in assistant_messages(alice, session["id"]) if m["info"].get("summary"))
    [record] = records(purpose="compaction")
    assert record.message_id == summary["info"]["id"] and record.cost == summary["info"]["cost"]
    assert record.agent == "compaction"
