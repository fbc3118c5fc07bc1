import re

from tests.sessions.helpers import create_session


def test_it_creates_a_session_pinned_to_the_directory(alice):
    session = create_session(alice, title="Hello")
    assert session["id"].startswith("ses_")
    assert session["title"] == "Hello"
    assert session["directory"] == str(alice.repo)
    assert session["path"] == ""
    assert len(session["projectID"]) == 40
    assert session["time"]["created"] == session["time"]["updated"]
    assert session["tokens"] == {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    assert re.fullmatch(r"[a-z]+-[a-z]+", session["slug"])
    assert "parentID" not in session and "share" not in session


def test_it_gives_default_titles(alice):
    parent = create_session(alice)
    assert re.fullmatch(r"New session - \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", parent["title"])
    child = create_session(alice, parentID=parent["id"])
    assert child["parentID"] == parent["id"]
    assert child["title"].startswith("Child session - ")


def test_a_parent_must_be_one_of_the_callers_sessions(alice, bob):
    before = len(alice.get("/session").json())
    bobs = create_session(bob)
    for parent in ("ses_doesnotexist", bobs["id"]):
        for path in ("/session", "/api/session"):
            response = alice.post(path, params={"directory": str(alice.repo)}, json={"parentID": parent})
            assert response.status_code == 404, (path, response.text)
            assert response.json()["name"] == "NotFoundError"
    assert len(alice.get("/session").json()) == before  # nothing made
    assert alice.get(f"/session/{bobs['id']}/children").status_code == 404


def test_it_accepts_a_missing_body_and_the_newer_fields(alice):
    response = alice.post("/session", params={"directory": str(alice.repo)})
    assert response.status_code == 200
    session = create_session(alice, agent="plan", model={"providerID": "fake", "id": "fake-model"},
                             permission=[{"permission": "bash", "pattern": "*", "action": "deny"}],
                             metadata={"from": "test"})
    assert session["agent"] == "plan"
    assert session["model"] == {"id": "fake-model", "providerID": "fake"}
    assert session["permission"] == [{"permission": "bash", "pattern": "*", "action": "deny"}]
    assert session["metadata"] == {"from": "test"}


def test_it_rejects_malformed_create_input(alice):
    for body in ({"parentID": "abc"}, {"title": 5}, [1, 2], {"model": "x"}):
        response = alice.post("/session", params={"directory": str(alice.repo)}, json=body)
        assert response.status_code == 400, body
        assert response.json()["name"] == "BadRequestError"


def test_it_gets_a_session_without_a_directory(alice):
    session = create_session(alice)
    response = alice.get(f"/session/{session['id']}")
    assert response.status_code == 200
    assert response.json() == session


def test_bad_ids_are_400_and_unknown_ids_404(alice):
    assert alice.get("/session/abc").status_code == 400
    assert alice.get("/session/abc").json()["name"] == "BadRequestError"
    response = alice.get("/session/ses_nope")
    assert response.status_code == 404
    assert response.json() == {"name": "NotFoundError", "data": {"message": "Session not found: ses_nope"}}
    for method, url in [("PATCH", "/session/ses_nope"), ("DELETE", "/session/ses_nope"),
                        ("GET", "/session/ses_nope/children"), ("GET", "/session/ses_nope/todo"),
                        ("POST", "/session/ses_nope/fork"), ("POST", "/session/ses_nope/share"),
                        ("DELETE", "/session/ses_nope/share"), ("GET", "/session/ses_nope/message")]:
        assert alice.client.request(method, url, json={}).status_code == 404, (method, url)


def test_update_changes_title_archive_and_permission_and_bumps_updated(alice):
    session = create_session(alice)
    response = alice.patch(f"/session/{session['id']}", json={"title": "Renamed"})
    assert response.status_code == 200
    renamed = response.json()
    assert renamed["title"] == "Renamed"
    assert renamed["time"]["updated"] >= session["time"]["updated"]
    archived = alice.patch(f"/session/{session['id']}", json={"time": {"archived": 1700000000000}}).json()
    assert archived["time"]["archived"] == 1700000000000
    assert archived["title"] == "Renamed"
    rules = [{"permission": "edit", "pattern": "*", "action": "ask"}]
    assert alice.patch(f"/session/{session['id']}", json={"permission": rules}).json()["permission"] == rules
    unarchived = alice.patch(f"/session/{session['id']}", json={"time": {"archived": None}}).json()
    assert "archived" not in unarchived["time"]
    assert alice.patch(f"/session/{session['id']}", json={}).status_code == 200
    assert alice.patch(f"/session/{session['id']}", json={"title": 5}).status_code == 400
    assert alice.patch("/session/abc", json={"title": "x"}).status_code == 400


def test_delete_returns_true_then_the_session_is_gone(alice):
    session = create_session(alice)
    response = alice.delete(f"/session/{session['id']}")
    assert response.status_code == 200 and response.json() is True
    assert alice.get(f"/session/{session['id']}").status_code == 404
    assert alice.delete(f"/session/{session['id']}").status_code == 404


def test_anonymous_callers_get_401(alice, anon):
    session = create_session(alice)
    sid = session["id"]
    for method, url in [("GET", "/session"), ("POST", "/session"), ("GET", "/session/status"),
                        ("GET", f"/session/{sid}"), ("PATCH", f"/session/{sid}"), ("DELETE", f"/session/{sid}"),
                        ("GET", f"/session/{sid}/children"), ("GET", f"/session/{sid}/todo"),
                        ("POST", f"/session/{sid}/fork"), ("POST", f"/session/{sid}/share"),
                        ("DELETE", f"/session/{sid}/share"), ("GET", f"/session/{sid}/message"),
                        ("GET", f"/session/{sid}/message/msg_x"), ("GET", "/api/session"),
                        ("POST", "/api/session"), ("GET", f"/api/session/{sid}"), ("PATCH", f"/api/session/{sid}"),
                        ("DELETE", f"/api/session/{sid}"), ("GET", f"/api/session/{sid}/message"),
                        ("GET", f"/api/session/{sid}/todo"), ("GET", f"/api/session/{sid}/context")]:
        assert anon.request(method, url).status_code == 401, (method, url)
    assert alice.get(f"/session/{sid}").status_code == 200
