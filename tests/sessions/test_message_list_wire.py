"""Message lists are rendered from the JSON the database holds (sessions_app.selectors.session_messages_stored):
the same objects as the one-message route, private keys dropped, non-ASCII intact, every paging shape."""
from tests.sessions.helpers import add_message, add_turns, create_session


def test_the_list_holds_exactly_what_the_message_route_returns(alice):
    session = create_session(alice)
    add_turns(session["id"], 3)
    nested = {"type": "json_schema", "schema": {"nested": {"list": [1, 2.5, None, True]}}}  # a stored format
    add_message(session["id"], texts=("naïve café ☕ \u2028 line", "second part"), _noReply=True, format=nested)
    listed = alice.get(f"/session/{session['id']}/message").json()
    assert len(listed) == 7
    for item in listed:
        single = alice.get(f"/session/{session['id']}/message/{item['info']['id']}").json()
        assert item == single
    last = listed[-1]
    assert "_noReply" not in last["info"]
    assert last["info"]["format"] == nested
    assert [p["text"] for p in last["parts"]] == ["naïve café ☕ \u2028 line", "second part"]


def test_pages_of_the_original_and_v2_lists_cover_every_message_once(alice):
    session = create_session(alice)
    messages = add_turns(session["id"], 4)
    ids = [m["info"]["id"] for m in messages]
    seen, url, params = [], f"/session/{session['id']}/message", {"limit": 3}
    while True:
        response = alice.get(url, params=params)
        assert response.status_code == 200
        page = [m["info"]["id"] for m in response.json()]
        assert page == sorted(page)
        assert all(part["messageID"] == mid for m in response.json() for part in m["parts"]
                   for mid in [m["info"]["id"]])
        seen = page + seen
        if "x-next-cursor" not in response.headers:
            break
        params = {"limit": 3, "before": response.headers["x-next-cursor"]}
    assert seen == ids
    for order in ("asc", "desc"):
        seen, params = [], {"limit": 3, "order": order}
        while True:
            body = alice.get(f"/api/session/{session['id']}/message", params=params).json()
            seen += [m["info"]["id"] for m in body["data"]]
            cursor = body["cursor"].get("next")
            if not cursor:
                break
            params = {"limit": 3, "cursor": cursor}
        assert seen == (ids if order == "asc" else ids[::-1])


def test_an_indented_rendering_asked_for_in_accept_is_the_same_json(alice):
    session = create_session(alice)
    add_turns(session["id"], 1)
    compact = alice.get(f"/session/{session['id']}/message")
    indented = alice.get(f"/session/{session['id']}/message", headers={"Accept": "application/json; indent=4"})
    assert indented.status_code == 200
    assert b"\n" in indented.content and b"\n" not in compact.content
    assert indented.json() == compact.json()


def test_another_users_message_list_is_404(alice, bob):
    session = create_session(alice)
    add_turns(session["id"], 1)
    assert bob.get(f"/session/{session['id']}/message").status_code == 404
    assert bob.get(f"/api/session/{session['id']}/message").status_code == 404
