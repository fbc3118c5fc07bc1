from tests.sessions.helpers import add_turns, create_session


def test_fork_copies_the_messages_strictly_before_the_given_one(alice):
    session = create_session(alice, title="Original")
    turns = add_turns(session["id"], 3)
    boundary = turns[2]["info"]["id"]  # the second user message
    response = alice.post(f"/session/{session['id']}/fork", json={"messageID": boundary})
    assert response.status_code == 200
    fork = response.json()
    assert fork["title"] == "Original (fork #1)"
    assert "parentID" not in fork
    assert fork["directory"] == session["directory"]
    copied = alice.get(f"/session/{fork['id']}/message").json()
    assert [m["parts"][0]["text"] for m in copied] == ["question 0", "answer 0"]
    new_ids = [m["info"]["id"] for m in copied]
    assert new_ids == sorted(new_ids)
    assert not set(new_ids) & {t["info"]["id"] for t in turns}
    assert copied[1]["info"]["parentID"] == copied[0]["info"]["id"]
    for message in copied:
        assert message["info"]["sessionID"] == fork["id"]
        for part in message["parts"]:
            assert part["messageID"] == message["info"]["id"] and part["sessionID"] == fork["id"]
    # the source is untouched and has no child from a fork
    assert len(alice.get(f"/session/{session['id']}/message").json()) == 6
    assert alice.get(f"/session/{session['id']}/children").json() == []


def test_fork_without_a_message_copies_everything(alice):
    session = create_session(alice, title="Original")
    turns = add_turns(session["id"], 2)
    for body in ({}, None):
        response = alice.post(f"/session/{session['id']}/fork", json=body) if body is not None else \
            alice.post(f"/session/{session['id']}/fork")
        assert response.status_code == 200
        copied = alice.get(f"/session/{response.json()['id']}/message").json()
        assert [m["parts"][0]["text"] for m in copied] == [t["parts"][0]["text"] for t in turns]


def test_fork_at_the_first_message_copies_nothing_and_a_fork_of_a_fork_counts_up(alice):
    session = create_session(alice, title="Original")
    turns = add_turns(session["id"], 1)
    fork = alice.post(f"/session/{session['id']}/fork", json={"messageID": turns[0]["info"]["id"]}).json()
    assert alice.get(f"/session/{fork['id']}/message").json() == []
    again = alice.post(f"/session/{fork['id']}/fork", json={}).json()
    assert again["title"] == "Original (fork #2)"


def test_fork_rejects_a_bad_message_id(alice):
    session = create_session(alice)
    assert alice.post(f"/session/{session['id']}/fork", json={"messageID": "abc"}).status_code == 400
