from tests.runner.conftest import text_prompt


def test_prompt_async_answers_204_and_the_session_runs(alice, llm, session_of):
    session = session_of()
    response = alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("hi"))
    assert response.status_code == 204 and response.content == b""
    from tests.runner.conftest import wait_until

    messages = wait_until(lambda: [m for m in alice.get(f"/session/{session['id']}/message").json()
                                   if m["info"]["role"] == "assistant" and m["info"]["time"].get("completed")])
    assert messages[0]["info"]["finish"] == "stop"


def test_no_reply_returns_the_user_message_and_calls_no_model(alice, llm, session_of):
    session = session_of()
    response = alice.post(f"/session/{session['id']}/message", json=text_prompt("just a note", noReply=True))
    assert response.status_code == 200
    body = response.json()
    assert body["info"]["role"] == "user"
    assert set(body["info"]) >= {"id", "sessionID", "role", "time", "agent", "model"}
    assert not any(key.startswith("_") for key in body["info"])
    assert body["parts"][0]["text"] == "just a note"
    assert llm.requests == []
    # the note is context for the next prompt, never answered on its own
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("now answer")).json()
    assert answer["info"]["parentID"] != body["info"]["id"]
    roles = [m["info"]["role"] for m in alice.get(f"/session/{session['id']}/message").json()]
    assert roles == ["user", "user", "assistant"]


def test_it_rejects_malformed_bodies_with_400(alice, llm, session_of):
    session = session_of()
    url = f"/session/{session['id']}/message"
    for body in ({}, {"parts": "x"}, {"parts": [{"type": "text"}]}, {"parts": [{"type": "nope", "text": "x"}]},
                 {"parts": [{"type": "text", "text": "x"}], "messageID": "abc"},
                 {"parts": [{"type": "text", "text": "x"}], "model": {"providerID": "fake"}},
                 {"parts": [{"type": "file", "url": "file:///etc/hostname"}]}, [1, 2]):
        response = alice.post(url, json=body)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["name"] == "BadRequestError"
    assert alice.post(f"/session/{session['id']}/prompt_async", json={}).status_code == 400


def test_unknown_model_or_agent_is_400_and_stores_nothing(alice, llm, session_of):
    session = session_of()
    url = f"/session/{session['id']}/message"
    response = alice.post(url, json=text_prompt("x", model={"providerID": "fake", "modelID": "nope"}))
    assert response.status_code == 400, response.text
    response = alice.post(url, json=text_prompt("x", agent="no-such-agent"))
    assert response.status_code == 400, response.text
    assert alice.get(url).json() == []


def test_anonymous_callers_get_401(anon, alice, session_of):
    session = session_of()
    for path in ("message", "prompt_async", "abort"):
        assert anon.post(f"/session/{session['id']}/{path}", json=text_prompt("x")).status_code == 401
    assert anon.post(f"/api/session/{session['id']}/prompt", json={"prompt": text_prompt("x")}).status_code == 401
    assert anon.post(f"/api/session/{session['id']}/wait").status_code == 401


def test_bob_gets_404_on_alices_session(alice, bob, llm, session_of):
    session = session_of()
    for path in ("message", "prompt_async", "abort"):
        response = bob.post(f"/session/{session['id']}/{path}", json=text_prompt("x"))
        assert response.status_code == 404, (path, response.text)
    assert bob.post(f"/api/session/{session['id']}/prompt", json={"prompt": text_prompt("x")}).status_code == 404
    assert bob.post(f"/api/session/{session['id']}/wait").status_code == 404
    assert alice.get(f"/session/{session['id']}/message").json() == []


def test_unknown_or_malformed_session_ids(alice):
    assert alice.post("/session/ses_nope/message", json=text_prompt("x")).status_code == 404
    assert alice.post("/session/abc/abort").status_code == 400
    assert alice.post("/session/ses_nope/abort").status_code == 404


def test_v2_prompt_stores_and_wait_returns_the_answer(alice, llm, session_of):
    from tests.fakes.fixtures import Reply

    session = session_of()
    llm.script(Reply(text="v2 answer"))
    response = alice.post(f"/api/session/{session['id']}/prompt", json={"prompt": text_prompt("hi")})
    assert response.status_code == 200, response.text
    user = response.json()["data"]
    assert user["info"]["role"] == "user"
    waited = alice.post(f"/api/session/{session['id']}/wait")
    assert waited.status_code == 200, waited.text
    message = waited.json()["data"]["message"]
    assert message["info"]["role"] == "assistant" and message["info"]["parentID"] == user["info"]["id"]
    assert message["parts"][1]["text"] == "v2 answer"


def test_v2_deferred_prompt_waits_for_the_next_prompt(alice, llm, session_of):
    session = session_of()
    deferred = alice.post(f"/api/session/{session['id']}/prompt",
                          json={"prompt": text_prompt("later"), "delivery": "deferred"}).json()["data"]
    assert alice.get("/session/status").json().get(session["id"]) is None
    assert llm.requests == []
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("now")).json()
    messages = alice.get(f"/session/{session['id']}/message").json()
    parents = [m["info"]["parentID"] for m in messages if m["info"]["role"] == "assistant"]
    assert parents == [deferred["info"]["id"], answer["info"]["parentID"]]
    assert alice.post(f"/api/session/{session['id']}/prompt", json={"prompt": {"parts": 3}}).status_code == 400
    assert alice.post(f"/api/session/{session['id']}/prompt", json={}).status_code == 400
