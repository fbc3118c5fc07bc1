"""A client-chosen messageID must sort after the session's last message: the runner answers the queue in id
order and the waiting request looks for the answer after it, so an earlier id would never be answered.
Every route that takes one answers 400 at once, names the field, and stores (and runs) nothing."""
import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt

EARLY = "msg_000000000001AAAAAAAAAAAAAA"  # sorts before any id minted today


def _routes(sid: str) -> dict:
    return {
        "prompt": (f"/session/{sid}/message", text_prompt("late", messageID=EARLY)),
        "prompt_async": (f"/session/{sid}/prompt_async", text_prompt("late", messageID=EARLY)),
        "command": (f"/session/{sid}/command", {"command": "init", "arguments": "", "messageID": EARLY}),
        "init": (f"/session/{sid}/init", {"modelID": "fake-model", "providerID": "fake", "messageID": EARLY}),
        "shell": (f"/session/{sid}/shell", {"agent": "build", "command": "touch shell-ran", "messageID": EARLY}),
        "v2 prompt": (f"/api/session/{sid}/prompt", {"prompt": text_prompt("late", messageID=EARLY)}),
    }


@pytest.mark.parametrize("route", ["prompt", "prompt_async", "command", "init", "shell", "v2 prompt"])
def test_an_out_of_order_message_id_is_a_400_naming_the_field_and_stores_nothing(alice, llm, session_of, route):
    session = session_of()
    sid = session["id"]
    llm.script(Reply(text="first answer"))
    first = alice.post(f"/session/{sid}/message", json=text_prompt("first"))
    assert first.status_code == 200, first.text
    before = alice.get(f"/session/{sid}/message").json()
    model_calls = len(llm.requests)

    url, body = _routes(sid)[route]
    response = alice.post(url, json=body)

    assert response.status_code == 400, response.text
    error = response.json()
    assert error["name"] == "BadRequestError"
    assert "messageID" in error["data"]["message"]
    assert [issue["path"] for issue in error["data"]["issues"]] == [["messageID"]]
    assert alice.get(f"/session/{sid}/message").json() == before
    assert alice.get(f"/session/{sid}/message/{EARLY}").status_code == 404
    assert len(llm.requests) == model_calls
    assert alice.get("/session/status").json().get(sid) is None
    assert not (alice.repo / "shell-ran").exists()


def test_an_id_that_sorts_after_the_last_message_is_taken(alice, llm, session_of):
    from agentserver import ids

    session = session_of()
    sid = session["id"]
    llm.script(Reply(text="one"), Reply(text="two"))
    assert alice.post(f"/session/{sid}/message", json=text_prompt("first")).status_code == 200
    later = ids.ascending("msg")
    answer = alice.post(f"/session/{sid}/message", json=text_prompt("second", messageID=later))
    assert answer.status_code == 200, answer.text
    assert answer.json()["info"]["parentID"] == later
    assert answer.json()["parts"][1]["text"] == "two"


def test_an_id_already_used_in_another_session_is_a_400(alice, llm, session_of):
    first, second = session_of(), session_of()
    llm.script(Reply(text="one"))
    stored = alice.post(f"/session/{first['id']}/message", json=text_prompt("x")).json()
    response = alice.post(f"/session/{second['id']}/message",
                          json=text_prompt("y", messageID=stored["info"]["parentID"]))
    assert response.status_code == 400
    assert [issue["path"] for issue in response.json()["data"]["issues"]] == [["messageID"]]
    assert alice.get(f"/session/{second['id']}/message").json() == []


def test_a_waiting_prompt_ends_when_its_session_is_deleted(alice, llm, session_of):
    """The session goes away while a sync prompt waits for its answer: the wait ends (the aborted answer, or
    404 once the session is gone) instead of waiting forever for a message that can no longer come."""
    import threading

    from tests.runner.conftest import wait_until

    session = session_of()
    sid = session["id"]
    llm.script(Reply(text="a slow answer that takes a while to stream", delay=0.3))
    result = {}
    waiter = threading.Thread(target=lambda: result.update(
        response=alice.post(f"/session/{sid}/message", json=text_prompt("hi"))))
    waiter.start()
    wait_until(lambda: sid in alice.get("/session/status").json())
    assert alice.delete(f"/session/{sid}").status_code == 200
    waiter.join(timeout=60)
    assert not waiter.is_alive()
    response = result["response"]
    if response.status_code == 200:
        assert response.json()["info"]["error"]["name"] == "MessageAbortedError"
    else:
        assert response.status_code == 404, response.text
    assert alice.get(f"/session/{sid}").status_code == 404
