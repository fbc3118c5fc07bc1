"""session.deleteMessage, part.update, part.delete: a client edits the stored history."""
from agentserver import ids
from tests.sessions.helpers import add_message, create_session


def _url(session_id, message_id, part_id=None):
    url = f"/session/{session_id}/message/{message_id}"
    return f"{url}/part/{part_id}" if part_id else url


def test_it_deletes_a_message_with_its_parts(alice):
    session = create_session(alice)
    first = add_message(session["id"], texts=("keep",))
    second = add_message(session["id"], texts=("drop", "me"))
    response = alice.delete(_url(session["id"], second["info"]["id"]))
    assert response.status_code == 200 and response.json() is True
    listed = alice.get(f"/session/{session['id']}/message").json()
    assert [m["info"]["id"] for m in listed] == [first["info"]["id"]]
    assert alice.get(_url(session["id"], second["info"]["id"])).status_code == 404


def test_deleting_a_message_of_a_busy_session_is_a_conflict(alice):
    from sessions_app.runtime import leases

    session = create_session(alice)
    message = add_message(session["id"])
    assert leases.acquire(session["id"], "test-holder")
    try:
        response = alice.delete(_url(session["id"], message["info"]["id"]))
    finally:
        leases.release(session["id"], "test-holder")
    assert response.status_code == 409
    assert response.json()["name"] == "SessionBusyError"
    assert len(alice.get(f"/session/{session['id']}/message").json()) == 1


def test_it_updates_a_text_part_in_place(alice):
    session = create_session(alice)
    message = add_message(session["id"], texts=("old text",))
    part = message["parts"][0]
    response = alice.patch(_url(session["id"], message["info"]["id"], part["id"]),
                           json={**part, "text": "new text"})
    assert response.status_code == 200, response.text
    assert response.json()["text"] == "new text" and response.json()["id"] == part["id"]
    stored = alice.get(_url(session["id"], message["info"]["id"])).json()
    assert [p["text"] for p in stored["parts"]] == ["new text"]


def test_a_part_update_naming_another_part_or_type_is_refused_and_changes_nothing(alice):
    session = create_session(alice)
    message = add_message(session["id"], texts=("old text",))
    part = message["parts"][0]
    url = _url(session["id"], message["info"]["id"], part["id"])
    other = alice.patch(url, json={**part, "id": ids.ascending("prt"), "text": "x"})
    assert other.status_code == 400 and "id" in other.json()["data"]["message"]
    retyped = alice.patch(url, json={**part, "type": "reasoning", "text": "x"})
    assert retyped.status_code == 400 and "type" in retyped.json()["data"]["message"]
    no_text = alice.patch(url, json={"type": "text"})
    assert no_text.status_code == 400 and "text" in no_text.json()["data"]["message"]
    not_object = alice.patch(url, json=["text"])
    assert not_object.status_code == 400
    stored = alice.get(_url(session["id"], message["info"]["id"])).json()
    assert [p["text"] for p in stored["parts"]] == ["old text"]


def test_it_deletes_one_part(alice):
    session = create_session(alice)
    message = add_message(session["id"], texts=("a", "b"))
    response = alice.delete(_url(session["id"], message["info"]["id"], message["parts"][0]["id"]))
    assert response.status_code == 200 and response.json() is True
    stored = alice.get(_url(session["id"], message["info"]["id"])).json()
    assert [p["text"] for p in stored["parts"]] == ["b"]


def test_unknown_messages_and_parts_are_404(alice):
    session = create_session(alice)
    message = add_message(session["id"])
    assert alice.delete(_url(session["id"], ids.ascending("msg"))).status_code == 404
    assert alice.delete(_url(session["id"], message["info"]["id"], ids.ascending("prt"))).status_code == 404
    assert alice.patch(_url(session["id"], ids.ascending("msg"), ids.ascending("prt")),
                       json={"type": "text", "text": "x"}).status_code == 404
    assert alice.delete(_url(session["id"], "nope")).status_code == 400


def test_bob_cannot_touch_alices_messages(alice, bob):
    session = create_session(alice)
    message = add_message(session["id"], texts=("mine",))
    part = message["parts"][0]
    assert bob.delete(_url(session["id"], message["info"]["id"])).status_code == 404
    assert bob.patch(_url(session["id"], message["info"]["id"], part["id"]),
                     json={**part, "text": "bob was here"}).status_code == 404
    assert bob.delete(_url(session["id"], message["info"]["id"], part["id"])).status_code == 404
    stored = alice.get(_url(session["id"], message["info"]["id"])).json()
    assert [p["text"] for p in stored["parts"]] == ["mine"]


def test_anonymous_callers_are_refused(alice, anon):
    session = create_session(alice)
    message = add_message(session["id"])
    assert anon.delete(_url(session["id"], message["info"]["id"])).status_code == 401
    assert alice.get(_url(session["id"], message["info"]["id"])).status_code == 200
