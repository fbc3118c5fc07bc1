from tests.snapshots.conftest import messages_of


def by_file(diffs: list[dict]) -> dict:
    return {d["file"]: d for d in diffs}


def test_the_session_diff_reports_the_change(alice, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    diffs = by_file(alice.get(f"/session/{session['id']}/diff").json())
    assert set(diffs) == {"README.md", "new.txt"}
    readme = diffs["README.md"]
    assert (readme["additions"], readme["deletions"], readme["status"]) == (3, 1, "modified")
    assert readme["before"] == "hello\n" and readme["after"] == "bye\nworld\nagain\n"
    assert readme["patch"].startswith("Index: README.md\n") and "+bye\n" in readme["patch"]
    assert (diffs["new.txt"]["additions"], diffs["new.txt"]["status"]) == (1, "added")


def test_a_turn_diff_covers_only_that_turn(alice, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    edit_turn(session["id"], readme="bye\nworld\nagain\nmore\n", name="second.txt", new="two\n")
    messages = messages_of(alice, session["id"])
    users = [m["info"]["id"] for m in messages if m["info"]["role"] == "user"]
    first = by_file(alice.get(f"/session/{session['id']}/diff", params={"messageID": users[0]}).json())
    second = by_file(alice.get(f"/session/{session['id']}/diff", params={"messageID": users[1]}).json())
    assert set(first) == {"README.md", "new.txt"}
    assert set(second) == {"README.md", "second.txt"}
    assert (second["README.md"]["additions"], second["README.md"]["deletions"]) == (1, 0)
    # An assistant message stands for its turn; the stored user summary agrees.
    assistant = next(m for m in messages if m["info"].get("parentID") == users[1])
    assert by_file(alice.get(f"/session/{session['id']}/diff",
                             params={"messageID": assistant["info"]["id"]}).json()) == second
    assert by_file(messages[-3]["info"]["summary"]["diffs"]) == second
    whole = by_file(alice.get(f"/session/{session['id']}/diff").json())
    assert set(whole) == {"README.md", "new.txt", "second.txt"}


def test_v2_diff_uses_the_envelope(alice, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    body = alice.get(f"/api/session/{session['id']}/diff").json()
    assert {d["file"] for d in body["data"]} == {"README.md", "new.txt"}


def test_diff_validation_and_isolation(alice, bob, anon, session_of, edit_turn):
    session = session_of()
    url = f"/session/{session['id']}/diff"
    assert alice.get(url).json() == []
    assert alice.get(url, params={"messageID": "msg_doesnotexist"}).json() == []
    bad = alice.get(url, params={"messageID": "abc"})
    assert bad.status_code == 400 and bad.json()["name"] == "BadRequestError"
    assert bob.get(url).status_code == 404
    assert bob.get(f"/api/session/{session['id']}/diff").status_code == 404
    assert anon.get(url).status_code == 401
    assert alice.get("/session/ses_unknown/diff").status_code == 404
