"""A graceful stop (SIGTERM, as a deploy sends) loses no turn: the stopping worker ends its event streams at
once, finishes the running turn, and leaves the queued prompt to another worker, which answers it; a client
that reconnects there with Last-Event-ID misses nothing. session.shell keeps its lease alive and hears an
abort sent to another worker."""
import signal
import subprocess
import threading
import time

import pytest

from tests.events.sse_client import open_stream
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import Remote

WORDS = " ".join(f"w{i}" for i in range(40))


pytestmark = [pytest.mark.scaled,
              pytest.mark.long_running(seconds=30)]  # scheduled before shorter files (tests/conftest.py)


def assistants(persona, sid: str) -> list[dict]:
    return [m for m in persona.get(f"/session/{sid}/message").json() if m["info"]["role"] == "assistant"]


def test_a_stopping_worker_finishes_its_turn_and_hands_the_queue_over(alice, llm, session_of, server_factory):
    stopping_worker = server_factory({"AGENTSERVER_GRACE_SECONDS": "30"})
    stopping = Remote(alice, stopping_worker.url)
    sid = session_of()["id"]
    llm.script(Reply(text=WORDS, delay=0.2), Reply(text="answered by the worker that stayed"))
    with open_stream(alice, "/global/event", base_url=stopping.base_url) as stream:
        stream.next()
        assert stopping.post(f"/session/{sid}/prompt_async", json=text_prompt("slow")).status_code == 204
        wait_until(lambda: (a := assistants(alice, sid)) and len(a[0]["parts"]) > 1 and a[0]["parts"][1].get("text"))
        assert stopping.post(f"/session/{sid}/prompt_async", json=text_prompt("queued")).status_code == 204
        last_id = None
        while True:  # everything published so far, then the stop
            frame = stream.next()
            if frame.id is not None:
                last_id = frame.id
            if frame.data["payload"]["type"] == "message.updated" and \
                    frame.data["payload"]["properties"]["info"]["role"] == "user":
                break
        stopping_worker.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        stream.read_to_end(deadline_seconds=5)  # ended by the stop, not by the turn
        assert time.monotonic() - started < 5
    assert last_id is not None

    stopping_worker.process.wait(40)
    assert stopping_worker.process.returncode in (0, -signal.SIGTERM)
    finished = assistants(alice, sid)[0]
    assert "error" not in finished["info"], finished["info"]
    assert finished["info"]["time"]["completed"] and finished["parts"][1]["text"] == WORDS

    users = [m["info"]["id"] for m in alice.get(f"/session/{sid}/message").json() if m["info"]["role"] == "user"]
    queued = wait_until(lambda: [a for a in assistants(alice, sid) if a["info"]["parentID"] == users[1]
                                 and a["info"]["time"].get("completed")], timeout=40)[0]
    assert queued["parts"][1]["text"] == "answered by the worker that stayed"
    assert "error" not in queued["info"]

    # The client reconnects to the worker that stayed and replays from its last id: the turn's end is there.
    with open_stream(alice, "/global/event", headers={"Last-Event-ID": last_id}) as again:
        frame, seen = again.until(lambda d: d["payload"]["type"] == "message.updated"
                                  and d["payload"]["properties"]["info"]["id"] == queued["info"]["id"]
                                  and d["payload"]["properties"]["info"]["time"].get("completed"))
    replayed = [f for f in seen if f.id is not None]
    assert [int(f.id) for f in replayed] == sorted(int(f.id) for f in replayed)
    assert int(replayed[0].id) > int(last_id)
    assert any(f.data["payload"]["type"] == "message.updated"
               and f.data["payload"]["properties"]["info"]["id"] == finished["info"]["id"]
               and f.data["payload"]["properties"]["info"]["time"].get("completed") for f in replayed)


def test_a_turn_longer_than_the_grace_period_is_handed_over_and_the_queue_answered(
        alice, llm, session_of, server_factory):
    stopping_worker = server_factory({"AGENTSERVER_GRACE_SECONDS": "2"})
    stopping = Remote(alice, stopping_worker.url)
    sid = session_of()["id"]
    llm.script(Reply(text=" ".join(f"w{i}" for i in range(100)), delay=0.2), Reply(text="answered after all"))
    assert stopping.post(f"/session/{sid}/prompt_async", json=text_prompt("very slow")).status_code == 204
    wait_until(lambda: (a := assistants(alice, sid)) and len(a[0]["parts"]) > 1 and a[0]["parts"][1].get("text"))
    assert stopping.post(f"/session/{sid}/prompt_async", json=text_prompt("queued")).status_code == 204
    stopping_worker.process.send_signal(signal.SIGTERM)
    stopping_worker.process.wait(30)
    assert "handing them over" in stopping_worker.log()

    users = [m["info"]["id"] for m in alice.get(f"/session/{sid}/message").json() if m["info"]["role"] == "user"]
    # The worker that stayed adopts it: the cut turn is closed, nothing it had streamed is lost, the queue answered.
    queued = wait_until(lambda: [a for a in assistants(alice, sid) if a["info"]["parentID"] == users[1]
                                 and a["info"]["time"].get("completed")], timeout=40)[0]
    assert queued["parts"][1]["text"] == "answered after all"
    cut = assistants(alice, sid)[0]
    assert cut["info"]["error"]["name"] == "MessageAbortedError" and cut["info"]["time"]["completed"]
    assert cut["parts"][1]["text"].startswith("w0 w1 w2")
    wait_until(lambda: sid not in alice.get("/session/status").json())


def test_a_shell_keeps_its_lease_and_hears_an_abort_sent_to_another_worker(alice, llm, session_of, server_factory):
    short_lease = {"AGENTSERVER_LEASE_MS": "1500"}
    runs_it = Remote(alice, server_factory(short_lease).url)
    other = Remote(alice, server_factory(short_lease).url)
    sid = session_of()["id"]
    result = {}

    def run() -> None:
        result["body"] = runs_it.post(f"/session/{sid}/shell",
                                      json={"agent": "build", "command": "echo started; sleep 613"}).json()

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: other.get("/session/status").json().get(sid) == {"type": "busy"})
    time.sleep(3)  # twice the lease: still held, renewed by the shell
    assert other.get("/session/status").json().get(sid) == {"type": "busy"}
    busy = other.post(f"/session/{sid}/shell", json={"agent": "build", "command": "echo no"})
    assert busy.status_code == 409

    assert other.post(f"/session/{sid}/abort").json() is True
    thread.join(15)
    assert not thread.is_alive(), "the shell did not hear the abort"
    output = result["body"]["parts"][0]["state"]["output"]
    assert output.startswith("started\n") and "User aborted the command" in output
    wait_until(lambda: not subprocess.run(["pgrep", "-f", "^sleep 613$"], capture_output=True, check=False).stdout)
