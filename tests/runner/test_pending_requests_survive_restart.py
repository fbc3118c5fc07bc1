"""kill -9 while a tool waits on the user (runtime/resume.py): the interrupted assistant message is closed as
aborted (as the reference), the request stays listed and answerable on the new server; an allowing answer
re-runs the call under the same callID in a new assistant step and the turn finishes; a rejection is
recorded and the session simply goes on with the next prompt."""
import signal

import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import FAST, Remote, new_session

pytestmark = pytest.mark.long_running(seconds=30)  # scheduled before shorter files (tests/conftest.py)

QUESTION = {"questions": [{"question": "Which colour?", "header": "Colour",
                           "options": [{"label": "red", "description": "warm"},
                                       {"label": "blue", "description": "cool"}]}]}


def outside_file(persona, name="outside.txt"):
    path = persona.root / name
    path.write_text("restart-proof content\n")
    return str(path)


def messages(remote, sid):
    return remote.get(f"/session/{sid}/message").json()


def kill_while_waiting(alice, server_factory, kind="permission"):
    """A prompt whose tool waits on a `kind` request, then kill -9; returns (new server remote, sid, request)."""
    first = server_factory(FAST)
    remote = Remote(alice, first.url)
    sid = new_session(remote)["id"]
    assert remote.post(f"/session/{sid}/prompt_async", json=text_prompt("go")).status_code == 204
    [request] = wait_until(lambda: remote.get(f"/{kind}").json())
    first.stop(signal.SIGKILL)
    second = server_factory(FAST)
    again = Remote(alice, second.url)

    def interrupted_closed():
        assistants = [m for m in messages(again, sid) if m["info"]["role"] == "assistant"]
        return assistants and assistants[0]["info"].get("error") and sid not in again.get("/session/status").json()

    wait_until(interrupted_closed, timeout=30)
    return again, sid, request


@pytest.mark.parametrize("reply", ["once", "always"])
def test_a_permission_pending_at_a_kill_9_is_still_listed_and_an_approval_resumes_the_turn(
        alice, llm, server_factory, reply):
    llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice)})]), Reply(text="resumed and done"))
    again, sid, request = kill_while_waiting(alice, server_factory)
    assert request["permission"] == "external_directory"
    listed = again.get("/permission").json()
    assert [r["id"] for r in listed] == [request["id"]] and listed[0] == request
    interrupted = [m for m in messages(again, sid) if m["info"]["role"] == "assistant"][0]
    assert interrupted["info"]["error"] == {"name": "MessageAbortedError", "data": {"message": "Aborted"}}
    assert "_interrupted" not in interrupted["info"]

    assert again.post(f"/permission/{request['id']}/reply", json={"reply": reply}).json() is True

    def finished():
        found = [m for m in messages(again, sid) if m["info"]["role"] == "assistant"]
        last = found[-1]
        done = any(p["type"] == "text" and p["text"] == "resumed and done" for p in last["parts"])
        return found if done and last["info"]["time"].get("completed") else None

    assistants = wait_until(finished, timeout=30)
    assert len(assistants) == 3
    aborted, rerun, final = assistants
    assert aborted["info"]["id"] == interrupted["info"]["id"] and aborted["info"]["error"]["name"] == "MessageAbortedError"
    assert not [p for p in aborted["parts"] if p["type"] == "tool"]  # the call moved to the re-run step
    [tool] = [p for p in rerun["parts"] if p["type"] == "tool"]
    assert tool["callID"] == request["tool"]["callID"] and tool["tool"] == "read"
    assert tool["state"]["status"] == "completed" and "restart-proof content" in tool["state"]["output"]
    assert rerun["info"]["finish"] == "tool-calls" and "error" not in rerun["info"]
    user_id = messages(again, sid)[0]["info"]["id"]
    assert rerun["info"]["parentID"] == final["info"]["parentID"] == user_id
    assert again.get("/permission").json() == []
    wait_until(lambda: sid not in again.get("/session/status").json())
    # the model saw the re-run's result once
    final_request = [r for r in llm.requests if "title generator" not in r.system_text.lower()][-1]
    results = [m for m in final_request.body["messages"] if m.get("role") == "tool"]
    assert len(results) == 1 and "restart-proof content" in str(results[0]["content"])


def test_a_rejection_after_a_kill_9_is_recorded_and_the_next_prompt_is_answered(alice, llm, server_factory):
    llm.script(Reply(tool_calls=[("read", {"filePath": outside_file(alice)})]), Reply(text="next prompt answer"))
    again, sid, request = kill_while_waiting(alice, server_factory)
    assert again.post(f"/permission/{request['id']}/reply", json={"reply": "reject"}).json() is True
    assert again.get("/permission").json() == []
    answer = again.post(f"/session/{sid}/message", json=text_prompt("something else")).json()
    assert answer["parts"][1]["text"] == "next prompt answer"
    roles = [(m["info"]["role"], (m["info"].get("error") or {}).get("name")) for m in messages(again, sid)]
    assert roles == [("user", None), ("assistant", "MessageAbortedError"), ("user", None), ("assistant", None)]


def test_a_question_pending_at_a_kill_9_can_be_answered_and_the_turn_goes_on(alice, llm, server_factory):
    llm.script(Reply(tool_calls=[("question", QUESTION)]), Reply(text="blue it is"))
    again, sid, question = kill_while_waiting(alice, server_factory, kind="question")
    assert [q["id"] for q in again.get("/question").json()] == [question["id"]]
    assert again.post(f"/question/{question['id']}/reply", json={"answers": [["blue"]]}).status_code == 200

    def finished():
        last = [m for m in messages(again, sid) if m["info"]["role"] == "assistant"][-1]
        return any(p["type"] == "text" and p["text"] == "blue it is" for p in last["parts"])

    wait_until(finished, timeout=30)
    tools = [p for m in messages(again, sid) for p in m["parts"] if p["type"] == "tool"]
    assert len(tools) == 1 and tools[0]["state"]["status"] == "completed" and "blue" in tools[0]["state"]["output"]
    # The turn ends after its text (step-finish, snapshots, idle): a server stopped mid-turn hands it over to
    # the shared one, whose writes then raced the test database's flush (a deadlock in the PostgreSQL pass).
    wait_until(lambda: sid not in again.get("/session/status").json())
