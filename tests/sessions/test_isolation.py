from tests.sessions.helpers import add_message, create_session


def test_bob_gets_404_on_every_one_of_alices_sessions_messages_and_parts(alice, bob):
    from sessions_app.models import Session

    session = create_session(alice)
    child = create_session(alice, parentID=session["id"])
    message = add_message(session["id"])
    sid, mid = session["id"], message["info"]["id"]
    alice.post(f"/session/{sid}/share")
    routes = [("GET", f"/session/{sid}"), ("PATCH", f"/session/{sid}"), ("DELETE", f"/session/{sid}"),
              ("GET", f"/session/{sid}/children"), ("GET", f"/session/{sid}/todo"),
              ("POST", f"/session/{sid}/fork"), ("POST", f"/session/{sid}/share"),
              ("DELETE", f"/session/{sid}/share"), ("GET", f"/session/{sid}/message"),
              ("GET", f"/session/{sid}/message/{mid}"), ("GET", f"/api/session/{sid}"),
              ("PATCH", f"/api/session/{sid}"), ("DELETE", f"/api/session/{sid}"),
              ("GET", f"/api/session/{sid}/message"), ("GET", f"/api/session/{sid}/todo"),
              ("GET", f"/api/session/{sid}/context"), ("DELETE", f"/session/{child['id']}")]
    for method, url in routes:
        response = bob.client.request(method, url, json={"title": "pwned"})
        assert response.status_code == 404, (method, url, response.text)
        assert response.json()["name"] == "NotFoundError"
    # alice's session cannot be the parent of one of bob's
    refused = bob.post("/session", params={"directory": str(bob.repo)}, json={"parentID": sid})
    assert refused.status_code == 404 and refused.json()["name"] == "NotFoundError"
    assert bob.get(f"/session/{sid}/children").status_code == 404
    assert [s["id"] for s in alice.get(f"/session/{sid}/children").json()] == [child["id"]]
    assert Session.objects.get(id=sid).title == session["title"]
    assert alice.get(f"/session/{sid}/message/{mid}").status_code == 200
    assert bob.get("/session/status").json() == {}
