"""A fair share of the server (AGENTSERVER_MAX_TURNS_PER_PERSON): a person's turns beyond the cap wait in line,
in the order they asked, their session's status saying so; they start when a running turn ends; an abort
ends a wait; another person's turns never wait behind them. The running turn is held by a bash call that
waits for a file the test writes."""
import pytest

from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import Remote, new_session

HOLD = "while [ ! -e release-the-turn ]; do sleep 0.05; done; echo released"


@pytest.fixture(scope="module")
def capped_server(server_factory):
    return server_factory({"AGENTSERVER_MAX_TURNS_PER_PERSON": "1"})


@pytest.fixture
def remote(alice, llm, capped_server):
    return Remote(alice, capped_server.url)


def status_of(remote, session_id: str) -> dict:
    return remote.get("/session/status").json().get(session_id, {"type": "idle"})


def assistants(remote, session_id: str) -> list[dict]:
    return [m for m in remote.get(f"/session/{session_id}/message").json() if m["info"]["role"] == "assistant"]


def answered(remote, session_id: str, text: str) -> bool:
    return any(p.get("text") == text and m["info"]["time"].get("completed")
               for m in assistants(remote, session_id) for p in m["parts"])


def holding_turn(remote, alice) -> dict:
    """A session whose turn runs until the test writes the release file."""
    held = new_session(remote)
    assert remote.post(f"/session/{held['id']}/prompt_async", json=text_prompt("hold")).status_code == 204
    wait_until(lambda: any(p["type"] == "tool" and p["state"]["status"] == "running"
                           for m in assistants(remote, held["id"]) for p in m["parts"]), timeout=30)
    return held


def waiting(remote, session_id: str) -> bool:
    status = status_of(remote, session_id)
    return status["type"] == "retry" and status["message"].startswith("Waiting for a free turn")


def release(alice) -> None:
    (alice.repo / "release-the-turn").write_text("go\n")


def test_a_turn_beyond_the_cap_waits_saying_so_then_runs_after_the_running_one(alice, llm, remote):
    llm.script(Reply(tool_calls=[("bash", {"command": HOLD, "description": "hold"})]), Reply(text="held done"),
               Reply(text="second done"))
    held = holding_turn(remote, alice)
    second = new_session(remote)
    assert remote.post(f"/session/{second['id']}/prompt_async", json=text_prompt("second")).status_code == 204
    wait_until(lambda: waiting(remote, second["id"]), timeout=30)
    status = status_of(remote, second["id"])
    assert "1 of your turns are running" in status["message"] and "limit is 1" in status["message"]
    assert assistants(remote, second["id"]) == []  # nothing asked of the model while it waits
    release(alice)
    wait_until(lambda: answered(remote, second["id"], "second done"), timeout=60)
    assert answered(remote, held["id"], "held done")
    held_end = max(m["info"]["time"]["completed"] for m in assistants(remote, held["id"]))
    assert assistants(remote, second["id"])[0]["info"]["time"]["created"] >= held_end
    wait_until(lambda: remote.get("/session/status").json() == {}, timeout=30)


def test_waiting_turns_start_in_the_order_they_asked(alice, llm, remote):
    llm.script(Reply(tool_calls=[("bash", {"command": HOLD, "description": "hold"})]), Reply(text="held done"))
    holding_turn(remote, alice)
    first, second = new_session(remote), new_session(remote)
    # the later session asks first: the line is the order of asking, not of the sessions' ids
    assert remote.post(f"/session/{second['id']}/prompt_async", json=text_prompt("asked first")).status_code == 204
    wait_until(lambda: waiting(remote, second["id"]), timeout=30)
    assert remote.post(f"/session/{first['id']}/prompt_async", json=text_prompt("asked second")).status_code == 204
    wait_until(lambda: waiting(remote, first["id"]), timeout=30)
    assert "1 of yours ahead of this one" in status_of(remote, first["id"])["message"]
    release(alice)
    wait_until(lambda: remote.get("/session/status").json() == {}, timeout=60)
    asked_first, asked_second = assistants(remote, second["id"])[0], assistants(remote, first["id"])[0]
    assert asked_second["info"]["time"]["created"] >= asked_first["info"]["time"]["completed"]


def test_another_persons_turn_does_not_wait_behind_them(alice, bob, llm, remote, capped_server):
    configure_fake_provider(bob, llm)
    llm.script(Reply(tool_calls=[("bash", {"command": HOLD, "description": "hold"})]), Reply(text="bob done"),
               Reply(text="held done"), Reply(text="alice's second done"))
    holding_turn(remote, alice)
    alices_second = new_session(remote)
    assert remote.post(f"/session/{alices_second['id']}/prompt_async", json=text_prompt("wait")).status_code == 204
    wait_until(lambda: waiting(remote, alices_second["id"]), timeout=30)
    bobs = Remote(bob, capped_server.url)
    session = new_session(bobs)
    answer = bobs.post(f"/session/{session['id']}/message", json=text_prompt("hello"))
    assert answer.status_code == 200
    assert [p["text"] for p in answer.json()["parts"] if p["type"] == "text"] == ["bob done"]
    assert waiting(remote, alices_second["id"])  # alice's line is still held by her running turn
    release(alice)
    wait_until(lambda: answered(remote, alices_second["id"], "alice's second done"), timeout=60)


def test_an_abort_ends_a_wait_and_the_model_is_never_asked(alice, llm, remote):
    llm.script(Reply(tool_calls=[("bash", {"command": HOLD, "description": "hold"})]), Reply(text="held done"))
    held = holding_turn(remote, alice)
    second = new_session(remote)
    assert remote.post(f"/session/{second['id']}/prompt_async", json=text_prompt("never")).status_code == 204
    wait_until(lambda: waiting(remote, second["id"]), timeout=30)
    asked = len(llm.requests)
    assert remote.post(f"/session/{second['id']}/abort").json() is True
    wait_until(lambda: status_of(remote, second["id"])["type"] == "idle", timeout=30)
    assert status_of(remote, held["id"])["type"] == "busy"
    release(alice)
    wait_until(lambda: answered(remote, held["id"], "held done"), timeout=60)
    assert not any("never" in str(r.body.get("messages")) for r in llm.requests[asked:])
    assert not any(p.get("type") == "text" and p.get("text") for m in assistants(remote, second["id"])
                   for p in m["parts"])
