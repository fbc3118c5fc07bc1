"""Turns that survive a kill (runtime/resume.py): a worker killed with SIGKILL in the middle of a turn, and
the worker that adopts the session goes on with it from its last completed step. A call that was running is
closed as interrupted and the model is told so; a model call in flight is made again; the person sees one
answer, complete, and no aborted message. (The model stream's case is in test_restart_and_retry.py.)"""
import json
import signal

import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import FAST, Remote, new_session

pytestmark = pytest.mark.long_running(seconds=25)  # scheduled before shorter files (tests/conftest.py)

READ_ME = "README.md"


def _model_requests(llm) -> list:
    return [r for r in llm.requests if "title generator" not in r.system_text.lower()]


def _finished(remote, session_id: str):
    """The session's messages once its turn has ended: every assistant message completed, the last one a step
    that ends a turn (opencode's loop goes on after "tool-calls"), and the session idle. The messages are read
    before the status: a worker adopting the session removes a cut step before it makes the call again, but
    only once its lease (and so a busy status) is live; the other order could read an idle status before the
    adoption and the messages inside it."""
    messages = remote.get(f"/session/{session_id}/message").json()
    assistants = [m["info"] for m in messages if m["info"]["role"] == "assistant"]
    if not assistants or not all(a["time"].get("completed") for a in assistants):
        return None
    if assistants[-1].get("finish") == "tool-calls" and "error" not in assistants[-1]:
        return None
    if session_id in remote.get("/session/status").json():
        return None
    return messages


def _texts(message: dict) -> list[str]:
    return [p["text"] for p in message["parts"] if p["type"] == "text"]


def _tool_parts(message: dict) -> list[dict]:
    return [p for p in message["parts"] if p["type"] == "tool"]


def test_a_turn_killed_during_a_tool_call_goes_on_where_it_stopped(alice, llm, server_factory):
    first = server_factory(FAST)
    a = Remote(alice, first.url)
    session_id = new_session(a)["id"]
    marker = alice.repo / "call-started"
    llm.script(Reply(text="Running it.", tool_calls=[("bash", {"command": f"touch {marker}; sleep 120",
                                                               "description": "a long command"})]),
               Reply(text="The command was cut short; here is what I know."))
    assert a.post(f"/session/{session_id}/prompt_async", json=text_prompt("run the long one")).status_code == 204
    wait_until(marker.exists, timeout=30)
    first.stop(signal.SIGKILL)

    second = server_factory(FAST)
    b = Remote(alice, second.url)
    messages = wait_until(lambda: _finished(b, session_id), timeout=60, interval=0.2)
    assert [m["info"]["role"] for m in messages] == ["user", "assistant", "assistant"]
    user, cut, went_on = messages
    assert "error" not in cut["info"] and "error" not in went_on["info"]
    assert cut["info"]["finish"] == "tool-calls" and cut["info"]["parentID"] == user["info"]["id"]
    assert _texts(cut) == ["Running it."]
    [call] = _tool_parts(cut)
    assert call["state"]["status"] == "error"
    assert "interrupted" in call["state"]["error"] and call["state"]["metadata"]["interrupted"] is True
    assert went_on["info"]["parentID"] == user["info"]["id"]
    assert _texts(went_on) == ["The command was cut short; here is what I know."]
    told = json.dumps(_model_requests(llm)[-1].body)
    assert "interrupted" in told and "Running it." in told
    assert "_continues" not in json.dumps(messages)


def test_a_turn_killed_between_two_steps_makes_the_next_call_again_and_keeps_the_first(alice, llm,
                                                                                      server_factory):
    first = server_factory(FAST)
    a = Remote(alice, first.url)
    session_id = new_session(a)["id"]
    (alice.repo / READ_ME).write_text("the readme\n")
    llm.script(Reply(tool_calls=[("read", {"filePath": str(alice.repo / READ_ME)})]),
               Reply(text="slow second step", delay=30),
               Reply(text="The readme says hello."))
    assert a.post(f"/session/{session_id}/prompt_async", json=text_prompt("read it")).status_code == 204

    def second_call_made():
        # The model has the second call (its answer is slow): killed before the call reached it, the server
        # that adopts the turn would be given the slow answer itself, not the one scripted for the call again.
        return len(_model_requests(llm)) == 2

    wait_until(second_call_made, timeout=30)
    first.stop(signal.SIGKILL)

    second = server_factory(FAST)
    b = Remote(alice, second.url)
    messages = wait_until(lambda: _finished(b, session_id), timeout=60, interval=0.2)
    assert [m["info"]["role"] for m in messages] == ["user", "assistant", "assistant"]
    _, read_step, answer = messages
    [read] = _tool_parts(read_step)
    assert read["state"]["status"] == "completed" and "the readme" in read["state"]["output"]
    assert "error" not in answer["info"] and _texts(answer) == ["The readme says hello."], answer["info"].get("error")
    assert not any("slow second step" in t for m in messages for t in _texts(m))
    calls = [r for r in _model_requests(llm)]
    assert len(calls) == 3, "the read step once, the cut call, the call made again"


def test_a_runner_that_loses_its_lease_leaves_the_step_to_the_next_holder(alice, llm, server_factory):
    """A runner starved past its lease (here: the lease taken from under it) writes nothing more; the runner
    that adopts the session makes the model call again, and the person gets one complete answer, no abort."""
    from sessions_app.models import SessionLease

    first = server_factory(FAST)
    a = Remote(alice, first.url)
    session_id = new_session(a)["id"]
    llm.script(Reply(text=" ".join(f"w{i}" for i in range(200)), delay=0.1), Reply(text="made again"))
    assert a.post(f"/session/{session_id}/prompt_async", json=text_prompt("long one")).status_code == 204

    def streaming():
        return any(len(p.get("text", "")) > 20 for m in a.get(f"/session/{session_id}/message").json()
                   if m["info"]["role"] == "assistant" for p in m["parts"])

    wait_until(streaming, timeout=30)
    assert SessionLease.objects.filter(session_id=session_id).update(holder="a-runner-that-died", expires_at=0)

    messages = wait_until(lambda: _finished(a, session_id), timeout=60, interval=0.2)
    assert [m["info"]["role"] for m in messages] == ["user", "assistant"]
    answer = messages[1]
    assert "error" not in answer["info"] and _texts(answer) == ["made again"]
    wait_until(lambda: "lost its lease" in first.log(), timeout=30)  # its next renewal may come after the answer
