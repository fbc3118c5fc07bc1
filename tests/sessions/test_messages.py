from urllib.parse import parse_qs, urlparse

from tests.sessions.helpers import add_message, add_turns, create_session, post_note


def test_it_lists_messages_oldest_first_with_their_parts(alice):
    session = create_session(alice)
    turns = add_turns(session["id"], 3)
    listed = alice.get(f"/session/{session['id']}/message").json()
    assert [m["info"]["id"] for m in listed] == [t["info"]["id"] for t in turns]
    assert listed[0]["parts"][0]["text"] == "question 0"
    assert listed[1]["info"]["role"] == "assistant"
    assert listed[1]["info"]["parentID"] == listed[0]["info"]["id"]
    assert all(p["sessionID"] == session["id"] for m in listed for p in m["parts"])


def test_limit_gives_the_newest_n_and_pages_back_without_gaps_or_repeats(alice, fake_llm):
    from tests.fakes.fixtures import configure_fake_provider

    configure_fake_provider(alice, fake_llm)  # noReply prompts still name a model; none is called
    session = create_session(alice)
    notes = [post_note(alice, session["id"], f"note {n}", "second part") for n in range(22)]
    expected = [n["info"]["id"] for n in notes]
    assert all(n["info"]["role"] == "user" for n in notes)
    url = f"/session/{session['id']}/message"
    response = alice.get(url, params={"limit": 5})
    pages = []
    while True:
        assert response.status_code == 200
        pages.append([m["info"]["id"] for m in response.json()])
        if "link" not in response.headers:
            assert "x-next-cursor" not in response.headers
            break
        link = response.headers["link"]
        assert link.endswith('; rel="next"')
        next_url = urlparse(link[1:link.index(">")])
        query = parse_qs(next_url.query)
        assert query["before"] == [response.headers["x-next-cursor"]]
        assert query["limit"] == ["5"]
        response = alice.get(next_url.path, params={"limit": 5, "before": query["before"][0]})
    assert pages[0] == expected[-5:]
    for page in pages:
        assert page == sorted(page)
    flattened = [mid for page in reversed(pages) for mid in page]
    assert flattened == expected
    assert [len(p) for p in pages] == [5, 5, 5, 5, 2]
    assert [p["text"] for p in alice.get(url).json()[3]["parts"]] == ["note 3", "second part"]
    assert fake_llm.requests == []


def test_limit_zero_means_all_and_bad_input_is_400(alice):
    session = create_session(alice)
    add_turns(session["id"], 2)
    url = f"/session/{session['id']}/message"
    assert len(alice.get(url, params={"limit": 0}).json()) == 4
    assert alice.get(url, params={"limit": "abc"}).status_code == 400
    assert alice.get(url, params={"before": "!!notacursor"}).status_code == 400
    assert alice.get("/session/abc/message").status_code == 400


def test_it_gets_one_message(alice):
    session = create_session(alice)
    message = add_message(session["id"], texts=("one", "two"))
    mid = message["info"]["id"]
    response = alice.get(f"/session/{session['id']}/message/{mid}")
    assert response.status_code == 200
    body = response.json()
    assert body["info"]["id"] == mid
    assert [p["text"] for p in body["parts"]] == ["one", "two"]
    assert alice.get(f"/session/{session['id']}/message/msg_nope").status_code == 404
    assert alice.get(f"/session/{session['id']}/message/abc").status_code == 400


def test_a_message_of_another_session_is_not_found_through_this_one(alice):
    first = create_session(alice)
    second = create_session(alice)
    message = add_message(first["id"])
    assert alice.get(f"/session/{second['id']}/message/{message['info']['id']}").status_code == 404


def test_saving_again_updates_in_place(alice):
    from sessions_app.models import Session
    from sessions_app.store.messages import message_remove, part_remove, part_save

    session = create_session(alice)
    message = add_message(session["id"], texts=("draft",))
    part = {**message["parts"][0], "text": "final"}
    row = Session.objects.get(id=session["id"])
    part_save(session=row, part=part)
    listed = alice.get(f"/session/{session['id']}/message").json()
    assert [p["text"] for p in listed[0]["parts"]] == ["final"]
    part_remove(session=row, message_id=message["info"]["id"], part_id=part["id"])
    assert alice.get(f"/session/{session['id']}/message").json()[0]["parts"] == []
    message_remove(session=row, message_id=message["info"]["id"])
    assert alice.get(f"/session/{session['id']}/message").json() == []


def test_server_private_info_keys_never_reach_the_wire(alice):
    session = create_session(alice)
    message = add_message(session["id"], _noReply=True)
    listed = alice.get(f"/session/{session['id']}/message").json()
    assert listed[0]["info"]["id"] == message["info"]["id"]
    assert "_noReply" not in listed[0]["info"]
    assert "_noReply" not in alice.get(f"/session/{session['id']}/message/{message['info']['id']}").json()["info"]
    fork = alice.post(f"/session/{session['id']}/fork", json={}).json()
    assert "_noReply" not in alice.get(f"/session/{fork['id']}/message").json()[0]["info"]
