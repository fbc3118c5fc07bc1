"""Two workers on PostgreSQL + Redis (the scaled pass only): the runner lives on worker
A (alice's `server`), the requests go to worker B. Abort crosses over the channel layer, waiting and status
read the shared database."""
import os
from pathlib import Path

import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import Remote

pytestmark = pytest.mark.scaled
SLEEP = "sleep 617"  # unique enough to find the process


@pytest.fixture(scope="module")
def worker_b(server_factory):
    return server_factory({"REDIS_URL": os.environ["REDIS_URL"]})


def sleeping_processes() -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (proc / "cmdline").read_bytes().replace(b"\0", b" ").strip() == SLEEP.encode():
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def running_tool(persona, sid):
    for message in persona.get(f"/session/{sid}/message").json():
        for part in message["parts"]:
            if part["type"] == "tool" and part["state"]["status"] == "running":
                return part
    return None


def test_abort_on_another_worker_stops_the_run_and_its_process(alice, llm, session_of, worker_b):
    b = Remote(alice, worker_b.url)
    sid = session_of()["id"]
    llm.script(Reply(tool_calls=[("bash", {"command": SLEEP, "description": "nap"})]), Reply(text="never"))
    assert alice.post(f"/session/{sid}/prompt_async", json=text_prompt("nap")).status_code == 204  # worker A
    wait_until(lambda: running_tool(b, sid) and sleeping_processes())
    assert b.get("/session/status").json()[sid] == {"type": "busy"}

    assert b.post(f"/session/{sid}/abort").json() is True

    def aborted():
        assistants = [m for m in b.get(f"/session/{sid}/message").json() if m["info"]["role"] == "assistant"]
        return assistants and assistants[-1]["info"].get("error") and assistants[-1]
    message = wait_until(aborted, timeout=30)
    assert message["info"]["error"] == {"name": "MessageAbortedError", "data": {"message": "Aborted"}}
    assert message["info"]["time"]["completed"]
    wait_until(lambda: sid not in b.get("/session/status").json())
    wait_until(lambda: not sleeping_processes(), timeout=10)
    [tool] = [p for p in message["parts"] if p["type"] == "tool"]
    assert tool["state"]["status"] == "error"
    assert not [p for p in message["parts"] if p["type"] == "step-finish"]
    assert llm.pending == 1  # the loop did not go on


def test_a_sync_prompt_on_another_worker_is_answered_by_the_runner_on_the_first(alice, llm, session_of, worker_b):
    b = Remote(alice, worker_b.url)
    sid = session_of()["id"]
    llm.script(Reply(text=" ".join(f"w{i}" for i in range(60)), delay=0.05), Reply(text="answered across"))
    assert alice.post(f"/session/{sid}/prompt_async", json=text_prompt("long")).status_code == 204  # A runs
    wait_until(lambda: b.get("/session/status").json().get(sid) == {"type": "busy"})
    answer = b.post(f"/session/{sid}/message", json=text_prompt("queued on B")).json()
    assert answer["parts"][1]["text"] == "answered across"
    assert answer["info"]["role"] == "assistant" and answer["info"]["time"]["completed"]
    users = [m["info"]["id"] for m in b.get(f"/session/{sid}/message").json() if m["info"]["role"] == "user"]
    assert answer["info"]["parentID"] == users[1]
    wait_until(lambda: sid not in b.get("/session/status").json())
