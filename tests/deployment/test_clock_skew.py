"""Time from the database, not the host: workers whose clocks are off by tens of seconds (libfaketime, as a
second host with a drifting clock) neither adopt a live lease nor give a prompt an id that sorts before the
answer it follows; a runner that loses its lease stops."""
import time

import pytest

from tests.fakes.fixtures import Reply
from tests.hosts.cluster import faketime_preload
from tests.runner.conftest import text_prompt, wait_idle, wait_until
from tests.runner.test_restart_and_retry import Remote

# Skewed hosts need the database's clock: on SQLite it is each process's own.
pytestmark = [pytest.mark.scaled,
              pytest.mark.long_running(seconds=20)]  # scheduled before shorter files (tests/conftest.py)


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    """`skewed(offset)`: the environment of a worker whose wall clock is `offset` off, preloaded as the two-host
    tests' hosts are (tests/hosts/cluster.py: libfaketime behind the fix that keeps Python's sleeps working)."""
    preload = faketime_preload(tmp_path_factory.mktemp("faketime"))

    def environment(offset: str, **extra) -> dict:
        # Only the wall clock is off, as on the two-host tests' hosts: a faked monotonic clock also moved the
        # timed waits of Python's locks, and a worker now and then hung before its first log line.
        return {"LD_PRELOAD": preload, "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1", **extra}

    return environment



def assistants(persona, sid: str) -> list[dict]:
    return [m for m in persona.get(f"/session/{sid}/message").json() if m["info"]["role"] == "assistant"]


def test_the_skewed_worker_really_runs_on_another_clock(alice, server_factory, skewed):
    ahead = server_factory(skewed("+60s"))
    session = Remote(alice, ahead.url).post("/session", params={"directory": str(alice.repo)}, json={}).json()
    here = alice.get(f"/session/{session['id']}").json()
    assert session["time"]["created"] > time.time() * 1000 + 50_000 and here["id"] == session["id"]


def test_a_prompt_after_an_answer_from_a_host_ahead_sorts_after_it_and_is_answered(
        alice, llm, session_of, server_factory, skewed):
    ahead = Remote(alice, server_factory(skewed("+60s")).url)
    sid = session_of()["id"]
    llm.script(Reply(text="answered ahead"), Reply(text="answered here"))
    first = ahead.post(f"/session/{sid}/message", json=text_prompt("on the host ahead"))
    assert first.json()["parts"][1]["text"] == "answered ahead"
    wait_idle(alice, sid)

    second = alice.post(f"/session/{sid}/message", json=text_prompt("on the host on time"))  # clock 60 s behind
    assert second.status_code == 200, second.text
    assert second.json()["parts"][1]["text"] == "answered here"
    ids = [m["info"]["id"] for m in alice.get(f"/session/{sid}/message").json()]
    assert ids == sorted(ids) and len(ids) == 4
    assert second.json()["info"]["parentID"] == ids[2]


def test_a_host_whose_clock_is_ahead_never_adopts_a_live_lease(alice, llm, session_of, server_factory, skewed):
    ahead = Remote(alice, server_factory(skewed("+60s")).url)
    sid = session_of()["id"]
    words = " ".join(f"w{i}" for i in range(40))
    llm.script(Reply(text=words, delay=0.2))  # eight seconds: the janitor of the host ahead looks meanwhile
    assert ahead.get("/session/status").status_code == 200  # its janitor runs from its first request
    assert alice.post(f"/session/{sid}/prompt_async", json=text_prompt("slow")).status_code == 204
    wait_until(lambda: ahead.get("/session/status").json().get(sid) == {"type": "busy"})
    statuses = []
    while not (assistants(alice, sid) and assistants(alice, sid)[0]["info"]["time"].get("completed")):
        statuses.append(ahead.get("/session/status").json().get(sid))
    answers = assistants(alice, sid)
    assert len(answers) == 1, answers  # a second answer: the host ahead adopted the lease and ran the prompt again
    assert "error" not in answers[0]["info"], answers[0]["info"]
    assert answers[0]["parts"][1]["text"] == words
    assert statuses and set(map(str, statuses)) <= {str({"type": "busy"}), "None"}, statuses
    assert statuses.count({"type": "busy"}) >= len(statuses) - 2, statuses  # "None" only as the answer completes


def test_a_runner_that_loses_its_lease_stops(alice, llm, session_of, server_factory):
    from sessions_app.models import SessionLease

    worker = server_factory({"AGENTSERVER_LEASE_MS": "1500"})
    remote = Remote(alice, worker.url)
    sid = session_of()["id"]
    llm.script(Reply(text=" ".join(f"w{i}" for i in range(60)), delay=0.1))
    assert remote.post(f"/session/{sid}/prompt_async", json=text_prompt("long")).status_code == 204
    wait_until(lambda: assistants(remote, sid) and len(assistants(remote, sid)[0]["parts"]) > 1)
    # Another worker took the session over (as after an expiry): this runner's next renewal fails.
    SessionLease.objects.filter(session_id=sid).update(holder="another-worker", expires_at=2**62)
    wait_until(lambda: "lost its lease: stopping" in worker.log(), timeout=10)
    # It writes nothing more: the step is the lease holder's to go on with (runtime/resume.py), not closed as
    # aborted.
    def text_of(message):
        return "".join(p.get("text", "") for p in message["parts"])

    text_then = text_of(assistants(remote, sid)[0])
    time.sleep(1)  # a runner still streaming would add ten words a second
    later = assistants(remote, sid)
    assert len(later) == 1 and text_of(later[0]) == text_then and 0 < len(text_then.split()) < 60
    assert "error" not in later[0]["info"] and not later[0]["info"]["time"].get("completed")
    assert SessionLease.objects.get(session_id=sid).holder == "another-worker"
    assert llm.pending == 0
