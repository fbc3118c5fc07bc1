"""Idempotent by the client's messageID: a retried POST whose user message is already stored (the first
reached a host that stored it, then the answer or the host was lost) is answered as the first was, and
stores and runs nothing twice. An id that names another session's message, or an assistant message, is
still refused."""
from agentserver import ids
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle, wait_until


def _model_calls(llm) -> int:
    return len([r for r in llm.requests if "title generator" not in r.system_text.lower()])


def test_a_retried_prompt_async_is_accepted_once(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="the one answer"))
    body = text_prompt("hello", messageID=ids.ascending("msg"))
    assert alice.post(f"/session/{session['id']}/prompt_async", json=body).status_code == 204
    assert alice.post(f"/session/{session['id']}/prompt_async", json=body).status_code == 204
    wait_until(lambda: any(m["info"]["role"] == "assistant" and m["info"]["time"].get("completed")
                           for m in alice.get(f"/session/{session['id']}/message").json()))
    wait_idle(alice, session["id"])
    messages = alice.get(f"/session/{session['id']}/message").json()
    assert [m["info"]["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["info"]["id"] == body["messageID"]
    assert _model_calls(llm) == 1


def test_a_retried_prompt_is_answered_with_the_first_answer(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="the one answer"), Reply(text="never asked"))
    body = text_prompt("hello", messageID=ids.ascending("msg"))
    first = alice.post(f"/session/{session['id']}/message", json=body)
    assert first.status_code == 200, first.text
    again = alice.post(f"/session/{session['id']}/message", json=body)
    assert again.status_code == 200, again.text
    assert again.json() == first.json()
    assert [p["text"] for p in again.json()["parts"] if p["type"] == "text"] == ["the one answer"]
    assert len(alice.get(f"/session/{session['id']}/message").json()) == 2
    assert _model_calls(llm) == 1


def test_a_retried_v2_prompt_answers_the_stored_user_message(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="the one answer"))
    prompt = {"parts": [{"type": "text", "text": "hello"}], "messageID": ids.ascending("msg")}
    first = alice.post(f"/api/session/{session['id']}/prompt", json={"prompt": prompt})
    assert first.status_code == 200, first.text
    again = alice.post(f"/api/session/{session['id']}/prompt", json={"prompt": prompt})
    assert again.status_code == 200, again.text
    # The stored message as it stands now (the turn may have added its summary stub meanwhile).
    assert again.json()["data"]["info"]["id"] == first.json()["data"]["info"]["id"] == prompt["messageID"]
    assert again.json()["data"]["parts"] == first.json()["data"]["parts"]
    wait_until(lambda: any(m["info"]["role"] == "assistant" and m["info"]["time"].get("completed")
                           for m in alice.get(f"/session/{session['id']}/message").json()))
    wait_idle(alice, session["id"])
    assert [m["info"]["role"] for m in alice.get(f"/session/{session['id']}/message").json()] == ["user", "assistant"]


def test_an_id_of_another_sessions_message_is_still_refused(alice, llm, session_of):
    one, other = session_of(), session_of()
    llm.script(Reply(text="answer"))
    body = text_prompt("hello", messageID=ids.ascending("msg"))
    assert alice.post(f"/session/{one['id']}/prompt_async", json=body).status_code == 204
    refused = alice.post(f"/session/{other['id']}/prompt_async", json=body)
    assert refused.status_code == 400
    assert refused.json()["data"]["issues"][0]["path"] == ["messageID"]
    assert alice.get(f"/session/{other['id']}/message").json() == []


def test_an_id_of_an_assistant_message_is_still_refused(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="answer"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("hello")).json()
    refused = alice.post(f"/session/{session['id']}/prompt_async",
                         json=text_prompt("again", messageID=answer["info"]["id"]))
    assert refused.status_code == 400
    assert len(alice.get(f"/session/{session['id']}/message").json()) == 2
