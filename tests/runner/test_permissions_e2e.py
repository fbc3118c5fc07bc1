"""Permission and question requests raised by tools during a real prompt, answered over HTTP."""
import threading

import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle, wait_until


def outside_file(persona, name="outside.txt"):
    path = persona.root / name
    path.write_text("secret-ish outside the repo\n")
    return str(path)


def start_prompt(persona, session_id):
    results = {}

    def run():
        results["answer"] = persona.post(f"/session/{session_id}/message", json=text_prompt("read it")).json()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, results


def pending(persona, kind="permission"):
    return wait_until(lambda: persona.get(f"/{kind}").json())


def tool_part(persona, session_id):
    for message in persona.get(f"/session/{session_id}/message").json():
        for part in message["parts"]:
            if part["type"] == "tool":
                return message, part
    return None, None


@pytest.mark.parametrize("reply", ["once", "always"])
def test_a_read_outside_the_workspace_asks_and_an_approval_runs_it(alice, llm, session_of, reply):
    session = session_of()
    llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice)})]), Reply(text="all done"))
    thread, results = start_prompt(alice, session["id"])
    request = pending(alice)[0]
    assert request["permission"] == "external_directory" and request["sessionID"] == session["id"]
    assert request["tool"]["callID"]
    assert alice.post(f"/permission/{request['id']}/reply", json={"reply": reply}).json() is True
    thread.join(20)
    assert results["answer"]["parts"][1]["text"] == "all done"
    _, part = tool_part(alice, session["id"])
    assert part["state"]["status"] == "completed" and "secret-ish" in part["state"]["output"]
    if reply == "always":
        llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice, "second.txt")})]), Reply(text="again"))
        answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("read more")).json()
        assert answer["parts"][1]["text"] == "again"


def test_a_rejection_halts_the_loop_without_an_error(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice)})]), Reply(text="must not run"))
    thread, results = start_prompt(alice, session["id"])
    request = pending(alice)[0]
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "reject"})
    thread.join(20)
    answer = results["answer"]
    assert "error" not in answer["info"]
    assert llm.pending == 1  # the second reply was never asked for
    _, part = tool_part(alice, session["id"])
    assert part["state"]["status"] == "error" and "rejected" in part["state"]["error"]
    wait_idle(alice, session["id"])


def test_a_rejection_with_feedback_continues(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice)})]), Reply(text="ok, I will not"))
    thread, results = start_prompt(alice, session["id"])
    request = pending(alice)[0]
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "reject", "message": "not that file"})
    thread.join(20)
    assert results["answer"]["parts"][1]["text"] == "ok, I will not"
    _, part = tool_part(alice, session["id"])
    assert "not that file" in part["state"]["error"]
    assert "not that file" in str(llm.requests[-1].body)


def test_bob_can_neither_see_nor_answer_alices_request(alice, bob, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice)})]), Reply(text="done"))
    thread, results = start_prompt(alice, session["id"])
    request = pending(alice)[0]
    assert bob.get("/permission").json() == []
    assert bob.post(f"/permission/{request['id']}/reply", json={"reply": "once"}).status_code == 404
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "once"})
    thread.join(20)
    assert results["answer"]["parts"][1]["text"] == "done"


QUESTION = {"questions": [{"question": "Which colour?", "header": "Colour",
                           "options": [{"label": "red", "description": "warm"},
                                       {"label": "blue", "description": "cold"}]}]}


def test_a_question_answered(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("question", QUESTION)]), Reply(text="red it is"))
    thread, results = start_prompt(alice, session["id"])
    question = pending(alice, "question")[0]
    assert alice.post(f"/question/{question['id']}/reply", json={"answers": [["red"]]}).status_code == 200
    thread.join(20)
    assert results["answer"]["parts"][1]["text"] == "red it is"
    _, part = tool_part(alice, session["id"])
    assert part["state"]["status"] == "completed" and "red" in part["state"]["output"]


def test_a_question_rejected_halts(alice, bob, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("question", QUESTION)]), Reply(text="must not run"))
    thread, results = start_prompt(alice, session["id"])
    question = pending(alice, "question")[0]
    assert bob.post(f"/question/{question['id']}/reject").status_code == 404
    alice.post(f"/question/{question['id']}/reject")
    thread.join(20)
    assert "error" not in results["answer"]["info"]
    _, part = tool_part(alice, session["id"])
    assert part["state"]["status"] == "error"
    assert llm.pending == 1


def test_abort_rejects_a_pending_permission(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice)})]))
    alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("read"))
    pending(alice)
    assert alice.post(f"/session/{session['id']}/abort").json() is True
    wait_until(lambda: alice.get("/permission").json() == [])
    wait_idle(alice, session["id"], timeout=5)
