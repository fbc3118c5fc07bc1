from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt


def test_it_answers_a_prompt_with_the_last_assistant_message(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="Hello there friend"))
    response = alice.post(f"/session/{session['id']}/message", json=text_prompt("say hi"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["info"]["role"] == "assistant"
    assert body["info"]["finish"] == "stop"
    assert body["info"]["time"]["completed"]
    assert [p["type"] for p in body["parts"]] == ["step-start", "text", "step-finish"]
    assert body["parts"][1]["text"] == "Hello there friend"
    assert body["parts"][2]["tokens"]["input"] == 100
    messages = alice.get(f"/session/{session['id']}/message").json()
    assert [m["info"]["role"] for m in messages] == ["user", "assistant"]
    assert body["info"]["parentID"] == messages[0]["info"]["id"]
