from tests.sessions.helpers import add_message, add_turns, create_session


def test_v2_create_pins_the_session_to_the_resolved_context(alice):
    response = alice.post("/api/session", params={"directory": str(alice.repo)},
                          json={"title": "v2", "agent": "plan", "model": {"providerID": "fake", "modelID": "m"},
                                "permission": [{"permission": "edit", "pattern": "*", "action": "ask"}]})
    assert response.status_code == 200
    session = response.json()["data"]
    assert session["title"] == "v2" and session["agent"] == "plan"
    assert session["model"] == {"id": "m", "providerID": "fake"}
    assert session["location"] == {"directory": str(alice.repo)}
    assert alice.get(f"/api/session/{session['id']}").json()["data"] == session
    assert alice.post("/api/session", json={"title": 3}).status_code == 400


def test_v2_list_pages_with_a_cursor_without_gaps_or_repeats(alice):
    created = [create_session(alice, title=f"s{n}")["id"] for n in range(7)]
    params = {"directory": str(alice.repo), "limit": 3}
    seen, cursor = [], None
    while True:
        response = alice.get("/api/session", params={**params, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200
        body = response.json()
        seen += [s["id"] for s in body["data"]]
        cursor = body["cursor"].get("next")
        assert response.headers.get("x-next-cursor") == cursor
        if not cursor:
            break
    assert seen == list(reversed(created))
    ascending = alice.get("/api/session", params={"directory": str(alice.repo), "order": "asc"}).json()["data"]
    assert [s["id"] for s in ascending] == created
    assert alice.get("/api/session", params={"cursor": "garbage!"}).status_code == 400
    assert alice.get("/api/session", params={"order": "sideways"}).status_code == 400


def test_v2_update_and_delete(alice):
    session = create_session(alice)
    response = alice.patch(f"/api/session/{session['id']}", json={"title": "t", "archived": 1700000000000})
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["title"] == "t" and data["time"]["archived"] == 1700000000000
    assert alice.delete(f"/api/session/{session['id']}").json() == {"data": True}
    assert alice.get(f"/api/session/{session['id']}").status_code == 404
    assert alice.get("/api/session/abc").status_code == 400


def test_v2_message_list_pages_in_both_orders(alice):
    session = create_session(alice)
    expected = [t["info"]["id"] for t in add_turns(session["id"], 4)]
    for order, want in (("asc", expected), ("desc", list(reversed(expected)))):
        seen, cursor = [], None
        while True:
            params = {"cursor": cursor} if cursor else {"order": order, "limit": 3}
            if cursor:
                params["limit"] = 3
            body = alice.get(f"/api/session/{session['id']}/message", params=params).json()
            seen += [m["info"]["id"] for m in body["data"]]
            cursor = body["cursor"].get("next")
            if not cursor:
                break
        assert seen == want


def test_v2_context_starts_at_the_last_compaction(alice):
    session = create_session(alice)
    add_turns(session["id"], 2)
    sid = session["id"]
    assert len(alice.get(f"/api/session/{sid}/context").json()["data"]) == 4
    # a compaction request (user message with a compaction part) followed by a completed summary
    from agentserver import ids
    from sessions_app.models import Session
    from sessions_app.store.messages import part_save

    request = add_message(sid, texts=())
    part_save(session=Session.objects.get(id=sid), part={"id": ids.ascending("prt"), "messageID": request["info"]["id"],
                                                          "type": "compaction", "auto": False})
    summary = add_message(sid, role="assistant", texts=("summary",), parent_id=request["info"]["id"], summary=True)
    after = add_turns(sid, 1)
    context = [m["info"]["id"] for m in alice.get(f"/api/session/{sid}/context").json()["data"]]
    assert context == [request["info"]["id"], summary["info"]["id"]] + [m["info"]["id"] for m in after]
