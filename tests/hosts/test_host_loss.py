"""A host lost or restarted under load, through the load balancer. Killed (every process, SIGKILL) mid-stream:
its sessions are adopted by the other host, the interrupted message is closed, nothing acknowledged is lost, its
terminals leave the list, the next prompt is answered. Stopped gracefully (SIGTERM, as systemd does) and started
again mid-turn: the turn completes whole, and an event stream that was on the stopped host resumes with
Last-Event-ID on the other without a gap."""
import httpx
import pytest

from agentserver import ids
from tests.events.sse_client import SseStream
from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.hosts.cluster import STEER_HEADER
from tests.hosts.helpers import via
from tests.pty.conftest import shell_body
from tests.runner.conftest import text_prompt, wait_until

pytestmark = pytest.mark.long_running(seconds=40)  # scheduled before shorter files (tests/conftest.py)

LONG = " ".join(f"word{i}" for i in range(80))


def assistants(persona, sid: str) -> list[dict]:
    return [m for m in persona.get(f"/session/{sid}/message").json() if m["info"]["role"] == "assistant"]


def runs_on(session_id: str) -> str:
    """The host name of the worker whose runner holds the session's lease (workers.WORKER_ID's first part)."""
    from sessions_app.models import SessionLease

    holder = SessionLease.objects.get(session_id=session_id).holder
    return holder.split("#", 1)[0]


def streamed_text(message: dict) -> str:
    return "".join(p.get("text", "") for p in message["parts"] if p["type"] == "text")


def test_a_killed_host_loses_nothing_acknowledged(alice, fake_llm, hosts_up):
    configure_fake_provider(alice, fake_llm)
    a, b = via(alice, "a"), via(alice, "b")
    sid = a.post("/session", json={}).json()["id"]
    fake_llm.script(Reply(text="the first answer"))
    first = a.post(f"/session/{sid}/message", json=text_prompt("one"))
    assert first.status_code == 200, first.text
    wait_until(lambda: sid not in b.get("/session/status").json())
    before = alice.get(f"/session/{sid}/message").json()
    pty = a.post("/pty", json=shell_body()).json()
    other_pty = b.post("/pty", json=shell_body()).json()
    assert {p["id"] for p in alice.get("/pty").json()} == {pty["id"], other_pty["id"]}

    fake_llm.script(Reply(text=LONG, delay=0.1), Reply(text="two, made again"), Reply(text="answered after the loss"))
    assert a.post(f"/session/{sid}/prompt_async", json=text_prompt("two")).status_code == 204
    wait_until(lambda: len(assistants(b, sid)) == 2 and len(streamed_text(assistants(b, sid)[-1])) > 20)
    seen = streamed_text(assistants(b, sid)[-1])
    assert runs_on(sid) == hosts_up.hosts["a"].hostname  # the turn is a's, which dies with it

    hosts_up.hosts["a"].kill()

    # Through the balancer alone from here (it sends everything to b once a refuses connections).
    def closed():
        if sid in alice.get("/session/status").json():
            return None
        answers = assistants(alice, sid)
        if len(answers) < 2:  # b has not made the cut call's message again yet
            return None
        last = answers[-1]
        return last if last["info"]["time"].get("completed") else None
    # b adopts the session and makes the model call a was streaming again: one complete answer, no abort.
    made_again = wait_until(closed, timeout=60, interval=0.5)
    assert "error" not in made_again["info"], made_again["info"]
    assert seen and streamed_text(made_again) == "two, made again"
    after = alice.get(f"/session/{sid}/message").json()
    assert after[:len(before)] == before
    assert [m["info"]["role"] for m in after] == ["user", "assistant", "user", "assistant"]
    assert after[2]["parts"][0]["text"] == "two"

    wait_until(lambda: [p["id"] for p in alice.get("/pty").json()] == [other_pty["id"]], timeout=60, interval=0.5)
    assert alice.get(f"/pty/{pty['id']}").status_code == 404

    answer = alice.post(f"/session/{sid}/message", json=text_prompt("three"))
    assert answer.status_code == 200, answer.text
    assert any(p.get("text") == "answered after the loss" for p in answer.json()["parts"])
    ids = [m["info"]["id"] for m in alice.get(f"/session/{sid}/message").json()]
    assert ids == sorted(ids) and len(ids) == 6
    assert b.delete(f"/pty/{other_pty['id']}").json() is True


def stream(persona, url: str, host: str | None = None, last_event_id: str | None = None) -> SseStream:
    headers = {"Authorization": f"Bearer {persona.token}"}
    if host:
        headers[STEER_HEADER] = host
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    opened = SseStream(url, "/global/event", headers=headers, read_timeout=30)
    assert opened.status_code == 200
    assert opened.next().data["payload"]["type"] == "server.connected"
    return opened


def logged(frames) -> list[int]:
    return [int(f.id) for f in frames if f is not None and f.id is not None]


def read_until(sse: SseStream, predicate) -> list:
    frames = []
    while True:
        frame = sse.next()
        assert frame is not None, f"stream ended; read {[f.data for f in frames][-5:]}"
        frames.append(frame)
        if predicate(frame.data.get("payload", {})):
            return frames


def test_a_graceful_restart_loses_no_turn_and_replay_has_no_gap(alice, fake_llm, hosts_up):
    configure_fake_provider(alice, fake_llm)
    a, b = via(alice, "a"), via(alice, "b")
    steady = stream(alice, hosts_up.url, "b")
    moving = stream(alice, hosts_up.url, "a")
    sid = a.post("/session", json={}).json()["id"]
    fake_llm.script(Reply(text=LONG, delay=0.1))
    assert a.post(f"/session/{sid}/prompt_async", json=text_prompt("long")).status_code == 204
    wait_until(lambda: len(assistants(b, sid)) == 1 and streamed_text(assistants(b, sid)[0]))

    host = hosts_up.hosts["a"]
    host.stop(timeout=60)
    moved = []
    while (frame := moving.next()) is not None:  # what the stream on host a got before it closed
        moved.append(frame)
    moving.close()
    host.start()

    def done():
        if sid in alice.get("/session/status").json():
            return None
        messages = assistants(alice, sid)
        return messages[-1] if messages and messages[-1]["info"]["time"].get("completed") else None
    answer = wait_until(done, timeout=90, interval=0.5)
    assert "error" not in answer["info"], answer["info"]
    texts = [streamed_text(m) for m in assistants(alice, sid)]
    assert LONG in texts, texts

    resumed = stream(alice, hosts_up.url, last_event_id=str(logged(moved)[-1]))
    marker = b.post("/session", json={"title": "marker"}).json()["id"]

    def is_marker(payload):
        return payload.get("type") == "session.created" and payload["properties"]["info"]["id"] == marker
    after = read_until(resumed, is_marker)
    whole = read_until(steady, is_marker)
    resumed.close()
    steady.close()
    start = logged(moved)[0]
    expected = [i for i in logged(whole) if i >= start]
    assert expected == sorted(expected) and len(set(expected)) == len(expected)
    assert logged(moved) + logged(after) == expected
    kinds = [f.data["payload"]["type"] for f in after]
    assert "session.idle" in kinds or "session.status" in kinds
    with httpx.Client(base_url=host.url) as direct:
        assert direct.get("/global/health").status_code == 200


def test_a_turn_killed_during_a_tool_call_goes_on_on_the_other_host(alice, fake_llm, hosts_up):
    configure_fake_provider(alice, fake_llm)
    a = via(alice, "a")
    sid = a.post("/session", json={}).json()["id"]
    marker = alice.repo / "call-started"
    fake_llm.script(Reply(text="Running it.", tool_calls=[("bash", {"command": f"touch {marker}; sleep 120",
                                                                    "description": "a long command"})]),
                    Reply(text="It was cut short."))
    prompt = text_prompt("run the long one", messageID=ids.ascending("msg"))
    assert a.post(f"/session/{sid}/prompt_async", json=prompt).status_code == 204
    wait_until(marker.exists, timeout=60)

    hosts_up.hosts["a"].kill()

    # The client's retry of its POST (as if the 204 was lost with the host) is answered as the first was.
    assert alice.post(f"/session/{sid}/prompt_async", json=prompt).status_code == 204

    def finished():
        if sid in alice.get("/session/status").json():
            return None
        done = assistants(alice, sid)
        return done if len(done) == 2 and all(m["info"]["time"].get("completed") for m in done) else None

    cut, went_on = wait_until(finished, timeout=90, interval=0.5)
    assert "error" not in cut["info"] and "error" not in went_on["info"]
    [call] = [p for p in cut["parts"] if p["type"] == "tool"]
    assert call["state"]["status"] == "error" and call["state"]["metadata"]["interrupted"] is True
    assert streamed_text(went_on) == "It was cut short."
    users = [m for m in alice.get(f"/session/{sid}/message").json() if m["info"]["role"] == "user"]
    assert [u["info"]["id"] for u in users] == [prompt["messageID"]]
