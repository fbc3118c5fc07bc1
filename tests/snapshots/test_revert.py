import threading

from tests.fakes.fixtures import Reply
from tests.runner.conftest import wait_until
from tests.snapshots.conftest import git_out, messages_of, text_prompt, wait_idle


def test_revert_restores_files_and_records_the_user_message(alice, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    messages = messages_of(alice, session["id"])
    user_id, tool_step = messages[0]["info"]["id"], messages[1]["info"]["id"]
    reverted = alice.post(f"/session/{session['id']}/revert", json={"messageID": tool_step})
    assert reverted.status_code == 200, reverted.text
    revert = reverted.json()["revert"]
    assert revert["messageID"] == user_id and "partID" not in revert
    assert len(revert["snapshot"]) == 40 and "deleted file mode" in revert["diff"]
    assert (alice.repo / "README.md").read_text() == "hello\n"
    assert not (alice.repo / "new.txt").exists()
    assert len(messages_of(alice, session["id"])) == 3  # nothing deleted yet
    assert alice.get(f"/session/{session['id']}").json()["revert"] == revert


def test_unrevert_brings_the_change_back(alice, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    user_id = messages_of(alice, session["id"])[0]["info"]["id"]
    alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id})
    body = alice.post(f"/session/{session['id']}/unrevert").json()
    assert "revert" not in body
    assert (alice.repo / "README.md").read_text() == "bye\nworld\nagain\n"
    assert (alice.repo / "new.txt").read_text() == "fresh\n"
    again = alice.post(f"/session/{session['id']}/unrevert")
    assert again.status_code == 200 and "revert" not in again.json()


def test_a_prompt_after_revert_removes_the_reverted_messages(alice, llm, session_of, edit_turn, recorder):
    session = session_of()
    llm.script(Reply(text="first answer"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("hello"))
    edit_turn(session["id"])
    messages = messages_of(alice, session["id"])
    doomed = [m["info"]["id"] for m in messages[2:]]
    alice.post(f"/session/{session['id']}/revert", json={"messageID": doomed[0]})
    events = recorder()
    llm.script(Reply(text="after revert"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("again"))
    removed = [e["properties"]["messageID"] for e in events.of(session["id"]) if e["type"] == "message.removed"]
    assert removed == doomed
    remaining = messages_of(alice, session["id"])
    assert [m["info"]["id"] for m in remaining[:2]] == [m["info"]["id"] for m in messages[:2]]
    assert len(remaining) == 4 and not set(doomed) & {m["info"]["id"] for m in remaining}
    assert "revert" not in alice.get(f"/session/{session['id']}").json()
    assert (alice.repo / "README.md").read_text() == "hello\n" and not (alice.repo / "new.txt").exists()
    assert alice.get(f"/session/{session['id']}/diff").json() == []


def test_revert_on_a_busy_session_is_409(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="x"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("one"))
    user_id = messages_of(alice, session["id"])[0]["info"]["id"]
    llm.script(Reply(text=" ".join(["slow"] * 40), delay=0.1))
    alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("two"))
    wait_until(lambda: session["id"] in alice.get("/session/status").json())
    for path, body in (("revert", {"messageID": user_id}), ("unrevert", None)):
        response = alice.post(f"/session/{session['id']}/{path}", json=body)
        assert response.status_code == 409, response.text
        assert response.json()["name"] == "SessionBusyError"
    alice.post(f"/session/{session['id']}/abort")
    wait_idle(alice, session["id"])
    assert "revert" not in alice.get(f"/session/{session['id']}").json()


def test_revert_validation_and_isolation(alice, bob, anon, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    user_id = messages_of(alice, session["id"])[0]["info"]["id"]
    url = f"/session/{session['id']}/revert"
    assert bob.post(url, json={"messageID": user_id}).status_code == 404
    assert bob.post(f"/session/{session['id']}/unrevert").status_code == 404
    assert anon.post(url, json={"messageID": user_id}).status_code == 401
    assert alice.post(url, json={}).status_code == 400
    assert alice.post(url, json={"messageID": "abc"}).status_code == 400
    assert alice.post(url, json={"messageID": user_id, "partID": "nope"}).status_code == 400
    assert alice.post("/session/ses_unknown/revert", json={"messageID": user_id}).status_code == 404
    unchanged = alice.post(url, json={"messageID": "msg_doesnotexist"})
    assert unchanged.status_code == 200 and "revert" not in unchanged.json()
    assert (alice.repo / "new.txt").exists()


def test_a_part_revert_keeps_the_parts_before_it(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="thinking first", tool_calls=[("write", {"filePath": str(alice.repo / "p.txt"),
                                                                    "content": "p\n"})]), Reply(text="ok"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("go"))
    step = messages_of(alice, session["id"])[1]
    tool_part = next(p for p in step["parts"] if p["type"] == "tool")
    body = alice.post(f"/session/{session['id']}/revert",
                      json={"messageID": step["info"]["id"], "partID": tool_part["id"]}).json()
    assert body["revert"]["messageID"] == step["info"]["id"] and body["revert"]["partID"] == tool_part["id"]
    assert not (alice.repo / "p.txt").exists()
    llm.script(Reply(text="next"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("next"))
    kept = messages_of(alice, session["id"])[1]
    assert kept["info"]["id"] == step["info"]["id"]
    assert [p["type"] for p in kept["parts"]] == ["step-start", "text"]


def test_the_users_own_git_is_untouched(alice, session_of, edit_turn):
    before = (git_out(alice.repo, "count-objects", "-v"), git_out(alice.repo, "for-each-ref"),
              git_out(alice.repo, "stash", "list"))
    session = session_of()
    edit_turn(session["id"])
    user_id = messages_of(alice, session["id"])[0]["info"]["id"]
    assert git_out(alice.repo, "status", "--porcelain").splitlines() == [" M README.md", "?? new.txt"]
    alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id})
    assert git_out(alice.repo, "status", "--porcelain") == ""
    alice.post(f"/session/{session['id']}/unrevert")
    after = (git_out(alice.repo, "count-objects", "-v"), git_out(alice.repo, "for-each-ref"),
             git_out(alice.repo, "stash", "list"))
    assert after == before
    assert git_out(alice.repo, "status", "--porcelain").splitlines() == [" M README.md", "?? new.txt"]


def test_moving_the_revert_boundary_starts_from_the_full_state(alice, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    edit_turn(session["id"], readme="bye\nworld\nagain\nmore\n", name="second.txt", new="two\n")
    users = [m["info"]["id"] for m in messages_of(alice, session["id"]) if m["info"]["role"] == "user"]
    url = f"/session/{session['id']}/revert"
    alice.post(url, json={"messageID": users[0]})
    assert not (alice.repo / "new.txt").exists() and not (alice.repo / "second.txt").exists()
    assert (alice.repo / "README.md").read_text() == "hello\n"
    alice.post(url, json={"messageID": users[1]})  # only the second turn stays reverted
    assert (alice.repo / "new.txt").exists() and not (alice.repo / "second.txt").exists()
    assert (alice.repo / "README.md").read_text() == "bye\nworld\nagain\n"
    alice.post(f"/session/{session['id']}/unrevert")
    assert (alice.repo / "second.txt").read_text() == "two\n"
    assert (alice.repo / "README.md").read_text() == "bye\nworld\nagain\nmore\n"
