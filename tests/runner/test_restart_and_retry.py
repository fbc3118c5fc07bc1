"""A dedicated server (short lease, fast retries): provider errors, and kill -9 in the middle of a stream."""
import signal

import httpx
import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.sse import EventRecorder

# A lease short enough for restart tests to adopt dead sessions quickly, long enough that a runner starved of
# CPU on a loaded machine still renews it in time (at 1.5 s the janitor adopted live sessions under load).
FAST = {"AGENTSERVER_LEASE_MS": "4000", "AGENTSERVER_RETRY_BASE_MS": "50"}


class Remote:
    """alice, talking to another server on the same database."""

    def __init__(self, persona, url):
        self.base_url = url
        self.repo = persona.repo
        self.client = httpx.Client(base_url=url, headers=dict(persona.client.headers), timeout=30)

    def get(self, url, **kw):
        return self.client.get(url, **kw)

    def post(self, url, **kw):
        return self.client.post(url, **kw)


@pytest.fixture(scope="module")
def fast_server(server_factory):
    return server_factory(FAST)


def new_session(remote):
    return remote.post("/session", params={"directory": str(remote.repo)}, json={}).json()


def test_a_429_goes_to_retry_then_succeeds(alice, llm, fast_server):
    remote = Remote(alice, fast_server.url)
    session = new_session(remote)
    events = EventRecorder(remote, remote.repo)
    try:
        llm.script(Reply(error_status=429, error_message="slow down"), Reply(error_status=429), Reply(text="made it"))
        answer = remote.post(f"/session/{session['id']}/message", json=text_prompt("hi")).json()
        assert answer["parts"][1]["text"] == "made it"
        retries = [e["properties"]["status"] for e in events.of(session["id"])
                   if e["type"] == "session.status" and e["properties"]["status"]["type"] == "retry"]
        assert [r["attempt"] for r in retries] == [1, 2]
        assert all(isinstance(r["next"], int) and r["message"] for r in retries)
    finally:
        events.close()


def test_a_400_ends_with_an_api_error_on_the_message(alice, llm, fast_server):
    remote = Remote(alice, fast_server.url)
    session = new_session(remote)
    events = EventRecorder(remote, remote.repo)
    try:
        llm.script(Reply(error_status=400, error_message="bad request from provider"))
        answer = remote.post(f"/session/{session['id']}/message", json=text_prompt("hi")).json()
        error = answer["info"]["error"]
        assert error["name"] == "APIError"
        assert error["data"]["statusCode"] == 400 and error["data"]["isRetryable"] is False
        events.wait_for(lambda e: e["type"] == "session.error" and e["properties"]["error"]["name"] == "APIError")
        events.wait_for(lambda e: e["type"] == "session.idle")
        assert len([r for r in llm.requests if "title generator" not in r.system_text.lower()]) == 1
    finally:
        events.close()


def test_kill_9_mid_stream_makes_the_call_again_and_loses_nothing_acknowledged(alice, llm, server_factory):
    """The model call in flight when its worker dies is made again by the worker that adopts the session: one
    complete answer, no aborted message; the prompt queued behind it is answered after it."""
    first = server_factory(FAST)
    remote = Remote(alice, first.url)
    session = new_session(remote)
    sid = session["id"]
    llm.script(Reply(text=" ".join(f"w{i}" for i in range(200)), delay=0.1), Reply(text="the long one, made again"),
               Reply(text="queued answer"), Reply(text="fresh answer"))
    assert remote.post(f"/session/{sid}/prompt_async", json=text_prompt("long one")).status_code == 204

    def streamed_text():
        for message in remote.get(f"/session/{sid}/message").json():
            for part in message["parts"]:
                if part["type"] == "text" and message["info"]["role"] == "assistant" and len(part["text"]) > 20:
                    return part
        return None

    wait_until(streamed_text)
    assert remote.post(f"/session/{sid}/prompt_async", json=text_prompt("queued one")).status_code == 204
    before = remote.get(f"/session/{sid}/message").json()
    first.stop(signal.SIGKILL)

    second = server_factory(FAST)
    again = Remote(alice, second.url)
    users = [m["info"]["id"] for m in before if m["info"]["role"] == "user"]

    def both_answered():
        messages = again.get(f"/session/{sid}/message").json()
        done = [m for m in messages if m["info"]["role"] == "assistant" and m["info"]["time"].get("completed")]
        return messages if len(done) == 2 else None

    messages = wait_until(both_answered, timeout=30)
    # The call made again is a new message, so it sorts after the prompt queued meanwhile, as a turn's later
    # steps do in opencode when a prompt is queued behind them; each answer names its prompt.
    assert [m["info"]["role"] for m in messages] == ["user", "user", "assistant", "assistant"]
    assert [m["info"]["id"] for m in messages if m["info"]["role"] == "user"] == users
    made_again, queued = messages[2], messages[3]
    assert "error" not in made_again["info"] and made_again["info"]["parentID"] == users[0]
    assert [p["text"] for p in made_again["parts"] if p["type"] == "text"] == ["the long one, made again"]
    assert "error" not in queued["info"] and queued["info"]["parentID"] == users[1]
    assert [p["text"] for p in queued["parts"] if p["type"] == "text"] == ["queued answer"]
    wait_until(lambda: sid not in again.get("/session/status").json())
    answer = again.post(f"/session/{sid}/message", json=text_prompt("still there?")).json()
    assert answer["parts"][1]["text"] == "fresh answer"
    second.stop()


def test_a_retry_after_a_partial_stream_stores_the_text_once(alice, llm, fast_server):
    """The first attempt streams two words and drops the connection; the retry streams the whole answer.
    The message holds the answer once: the failed attempt's text part is reset, not appended to."""
    remote = Remote(alice, fast_server.url)
    session = new_session(remote)
    events = EventRecorder(remote, remote.repo)
    try:
        llm.script(Reply(text="partial words that never finish", reasoning="first thoughts", break_after=3),
                   Reply(text="the whole answer", reasoning="second thoughts"))
        answer = remote.post(f"/session/{session['id']}/message", json=text_prompt("hi")).json()
        assert answer["info"].get("error") is None
        texts = [p["text"] for p in answer["parts"] if p["type"] == "text"]
        assert texts == ["the whole answer"]
        reasoning = [p["text"] for p in answer["parts"] if p["type"] == "reasoning"]
        assert reasoning == ["second thoughts"]
        stored = remote.get(f"/session/{session['id']}/message").json()[-1]
        assert [p["text"] for p in stored["parts"] if p["type"] == "text"] == ["the whole answer"]
        retries = [e for e in events.of(session["id"])
                   if e["type"] == "session.status" and e["properties"]["status"]["type"] == "retry"]
        assert len(retries) == 1
    finally:
        events.close()
