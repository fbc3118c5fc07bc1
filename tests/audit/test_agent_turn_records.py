"""A scripted turn leaves exactly the audit records it should, each with its actor: the agent's tool calls
(bash, an edit naming the file it wrote, a read that asked a permission, a question) as "agent in session S
on behalf of alice", the permission and the question answered by alice with her token, then the session
shared by her; and a session.shell command is recorded as hers."""
import threading

from auth_app.models import ApiToken
from tests.audit.helpers import details, last_id, records_after
from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.runner.conftest import text_prompt, wait_idle, wait_until

QUESTIONS = [{"question": "Ship it?", "header": "Ship", "options": [{"label": "Yes", "description": "go"},
                                                                     {"label": "No", "description": "stop"}]}]


def _session(persona) -> dict:
    response = persona.post("/session", params={"directory": str(persona.repo)}, json={})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_scripted_turn_leaves_exactly_the_expected_records(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    session = _session(alice)
    sid = session["id"]
    outside = alice.root / "outside.txt"
    outside.write_text("outside the repo\n")
    notes = str(alice.repo / "notes.txt")
    fake_llm.script(
        Reply(tool_calls=[("bash", {"command": "echo hi", "description": "say hi"})]),
        Reply(tool_calls=[("edit", {"filePath": notes, "oldString": "", "newString": "hello\n"})]),
        Reply(tool_calls=[("read", {"filePath": str(outside)})]),
        Reply(tool_calls=[("question", {"questions": QUESTIONS})]),
        Reply(text="all done"),
    )
    mark = last_id()
    answers = {}
    turn = threading.Thread(target=lambda: answers.update(
        answer=alice.post(f"/session/{sid}/message", json=text_prompt("go")).json()))
    turn.start()
    [permission] = wait_until(lambda: alice.get("/permission").json())
    assert alice.post(f"/permission/{permission['id']}/reply", json={"reply": "once"}).json() is True
    [question] = wait_until(lambda: alice.get("/question").json())
    assert alice.post(f"/question/{question['id']}/reply", json={"answers": [["Yes"]]}).status_code == 200
    turn.join(60)
    assert [part["text"] for part in answers["answer"]["parts"] if part["type"] == "text"] == ["all done"]
    wait_idle(alice, sid)
    assert alice.post(f"/session/{sid}/share").status_code == 200

    rows = records_after(mark, session=sid)
    assert [(row.action, row.object_id if row.action == "tool.call" else row.object_type) for row in rows] == [
        ("tool.call", "bash"), ("tool.call", "edit"), ("permission.asked", "permission"),
        ("permission.replied", "permission"), ("tool.call", "read"), ("question.asked", "question"),
        ("question.replied", "question"), ("tool.call", "question"), ("session.shared", "session")]
    token = ApiToken.objects.get(user=alice.user)
    by_agent = {"tool.call", "permission.asked", "question.asked"}
    for row in rows:
        assert row.actor_person == alice.user.pk, row.action
        if row.action in by_agent:
            assert (row.actor_session, row.actor_token) == (sid, None), row.action
        else:  # alice herself, with her token
            assert (row.actor_session, row.actor_token, row.actor_address) == ("", token.pk, "127.0.0.1"), row.action
    calls = [details(row) for row in rows if row.action == "tool.call"]
    assert all(row.outcome == "success" for row in rows)
    assert calls[0]["input"] == {"command": "echo hi", "description": "say hi"} and calls[0]["files"] == []
    assert calls[1]["files"] == [notes]
    assert details(rows[2])["permission"] == "external_directory"
    assert details(rows[3])["reply"] == "once"
    assert details(rows[6])["answers"] == [["Yes"]]
    assert records_after(mark, action="session.unshared") == []


def test_a_session_shell_command_is_recorded_as_the_persons(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    sid = _session(alice)["id"]
    mark = last_id()
    response = alice.post(f"/session/{sid}/shell", json={"agent": "build", "command": "echo from-the-shell"})
    assert response.status_code == 200, response.text
    [row] = records_after(mark, session=sid)
    assert (row.action, row.actor_person, row.actor_session) == ("session.shell", alice.user.pk, "")
    assert details(row)["command"] == "echo from-the-shell"


def test_a_failed_tool_call_is_recorded_as_a_failure(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    sid = _session(alice)["id"]
    fake_llm.script(Reply(tool_calls=[("read", {"filePath": str(alice.repo / "no-such-file")})]),
                    Reply(text="ok"))
    mark = last_id()
    alice.post(f"/session/{sid}/message", json=text_prompt("read it"))
    [row] = records_after(mark, session=sid)
    assert (row.action, row.outcome, row.object_id) == ("tool.call", "failure", "read")
    assert "not found" in details(row)["error"].lower()
