import os
import threading

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle, wait_until

SLEEP_ARG = "600.4242"


def sleep_processes() -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        if args[:2] == [b"sleep", SLEEP_ARG.encode()]:
            try:
                with open(f"/proc/{pid}/stat") as handle:
                    if handle.read().split(")")[-1].split()[0] == "Z":
                        continue
            except OSError:
                continue
            pids.append(int(pid))
    return pids


def messages_of(persona, session_id):
    return persona.get(f"/session/{session_id}/message").json()


def test_two_prompts_on_a_busy_session_are_both_answered_in_order(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="first answer here", delay=0.15), Reply(text="second answer"))
    assert alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("first")).status_code == 204
    results = {}

    def second():
        results["second"] = alice.post(f"/session/{session['id']}/message", json=text_prompt("second")).json()

    thread = threading.Thread(target=second)
    thread.start()
    thread.join(30)
    answer = results["second"]
    assert answer["parts"][1]["text"] == "second answer"
    messages = messages_of(alice, session["id"])
    users = [m for m in messages if m["info"]["role"] == "user"]
    assistants = [m for m in messages if m["info"]["role"] == "assistant"]
    assert [a["info"]["parentID"] for a in assistants] == [u["info"]["id"] for u in users]
    assert assistants[0]["parts"][1]["text"] == "first answer here"
    assert answer["info"]["parentID"] == users[1]["info"]["id"]
    # the first answer was made without the queued second prompt in its context
    calls = [r for r in llm.requests if "title generator" not in r.system_text.lower()]
    first_call, second_call = calls[0], calls[-1]
    assert "second" not in str(first_call.body.get("messages"))
    assert "first answer here" in str(second_call.body.get("messages"))


def test_abort_during_a_long_bash_call_kills_it_and_ends_the_message(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    llm.script(Reply(tool_calls=[("bash", {"command": f"sleep {SLEEP_ARG}", "description": "wait a while"})]))
    assert alice.post(f"/session/{session['id']}/prompt_async", json=text_prompt("sleep")).status_code == 204

    def running_tool():
        for message in messages_of(alice, session["id"]):
            for part in message["parts"]:
                if part["type"] == "tool" and part["state"]["status"] == "running":
                    return part
        return None

    wait_until(running_tool)
    wait_until(sleep_processes)
    response = alice.post(f"/session/{session['id']}/abort")
    assert response.status_code == 200 and response.json() is True
    wait_idle(alice, session["id"], timeout=5)
    wait_until(lambda: not sleep_processes(), timeout=5)
    assistant = [m for m in messages_of(alice, session["id"]) if m["info"]["role"] == "assistant"][-1]
    assert assistant["info"]["error"] == {"name": "MessageAbortedError", "data": {"message": "Aborted"}}
    assert assistant["info"]["time"]["completed"]
    tool = next(p for p in assistant["parts"] if p["type"] == "tool")
    assert tool["state"]["status"] == "error"
    assert "step-finish" not in [p["type"] for p in assistant["parts"]]
    events.wait_for(lambda e: e["type"] == "session.error"
                    and e["properties"]["error"]["name"] == "MessageAbortedError")
    events.wait_for(lambda e: e["type"] == "session.idle")
    # the session is usable afterwards
    llm.script(Reply(text="after abort"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("again")).json()
    assert answer["parts"][1]["text"] == "after abort"


def test_abort_of_a_streaming_reply_answers_the_waiting_prompt(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text=" ".join(f"tick{i}" for i in range(60)), delay=0.2))
    results = {}

    def prompt():
        results["answer"] = alice.post(f"/session/{session['id']}/message", json=text_prompt("slow")).json()

    thread = threading.Thread(target=prompt)
    thread.start()
    wait_until(lambda: any(p["type"] == "text" for m in messages_of(alice, session["id"]) for p in m["parts"]
                           if m["info"]["role"] == "assistant"))
    assert alice.post(f"/session/{session['id']}/abort").json() is True
    thread.join(10)
    answer = results["answer"]
    assert answer["info"]["error"]["name"] == "MessageAbortedError"
    text = next(p for p in answer["parts"] if p["type"] == "text")
    assert text["text"].startswith("tick0") and text["time"]["end"]
    assert alice.get("/session/status").json().get(session["id"]) is None


def test_abort_of_an_idle_session_is_true(alice, session_of):
    session = session_of()
    assert alice.post(f"/session/{session['id']}/abort").json() is True
