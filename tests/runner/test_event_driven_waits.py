"""A request waiting for the runner (a sync prompt) is woken by the session's events, not by a poll: it
answers within milliseconds of the runner's last event, in the runner's worker and on another one; when the
runner's worker dies, the worker that adopts the session answers the wait."""
import signal
import statistics
import threading
import time

import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.sse import EventRecorder
from tests.runner.test_cross_worker_runner import worker_b  # noqa: F401  (fixture)
from tests.runner.test_restart_and_retry import FAST, Remote, new_session

pytestmark = pytest.mark.long_running(seconds=20)  # scheduled before shorter files (tests/conftest.py)

# The wait used to read the database every 0.25 s: a median above this would be that poll, or worse.
WAKE_LIMIT = 0.1


def went_idle(session_id):
    def match(event):
        properties = event.get("properties") or {}
        return (event.get("type") == "session.status" and properties.get("sessionID") == session_id
                and properties["status"]["type"] == "idle")
    return match


def text_of(message: dict) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def answer_latency(persona, events: EventRecorder, session_id: str, text: str) -> float:
    """Seconds from the session's idle event (as this client saw it) to the prompt's answer."""
    before = len(events.events)
    answer = persona.post(f"/session/{session_id}/message", json=text_prompt(text))
    answered = time.monotonic()
    assert answer.status_code == 200, answer.text
    assert text_of(answer.json()) == f"answer to {text}"
    match = went_idle(session_id)
    wait_until(lambda: any(match(e) for e in events.events[before:]), timeout=10)
    idle_at = next(at for event, at in zip(events.events[before:], events.received[before:]) if match(event))
    return max(0.0, answered - idle_at)


def test_a_sync_prompt_answers_as_soon_as_the_runner_lets_go(alice, llm, session_of, recorder):
    sid = session_of()["id"]
    events = recorder()
    texts = [f"p{i}" for i in range(5)]
    llm.script(*[Reply(text=f"answer to {t}") for t in texts])
    latencies = [answer_latency(alice, events, sid, t) for t in texts]
    assert statistics.median(latencies) < WAKE_LIMIT, latencies


@pytest.mark.scaled
def test_a_sync_prompt_on_another_worker_answers_as_soon_as_the_runner_lets_go(alice, llm, session_of,
                                                                               worker_b):  # noqa: F811
    b = Remote(alice, worker_b.url)
    sid = session_of()["id"]
    events = EventRecorder(alice, alice.repo)
    try:
        latencies = []
        for i in range(5):
            # The runner lives on worker A (the prompt there keeps it busy); the wait is a prompt on B.
            llm.script(Reply(text=" ".join(f"w{n}" for n in range(20)), delay=0.02),
                       Reply(text=f"answer to q{i}"))
            assert alice.post(f"/session/{sid}/prompt_async", json=text_prompt(f"a{i}")).status_code == 204
            wait_until(lambda: b.get("/session/status").json().get(sid) == {"type": "busy"})
            latencies.append(answer_latency(b, events, sid, f"q{i}"))
            wait_until(lambda: sid not in b.get("/session/status").json())
        assert statistics.median(latencies) < WAKE_LIMIT, latencies
    finally:
        events.close()


def streaming(persona, session_id: str) -> bool:
    return any(m["info"]["role"] == "assistant" and len(text_of(m)) > 10
               for m in persona.get(f"/session/{session_id}/message").json())


def test_a_sync_prompt_is_answered_when_the_worker_running_its_session_dies(alice, llm, server_factory):
    first, second = server_factory(FAST), server_factory(FAST)
    a, b = Remote(alice, first.url), Remote(alice, second.url)
    sid = new_session(a)["id"]
    llm.script(Reply(text=" ".join(f"w{i}" for i in range(200)), delay=0.1), Reply(text="the long one, made again"),
               Reply(text="answered after the crash"))
    assert a.post(f"/session/{sid}/prompt_async", json=text_prompt("long one")).status_code == 204
    wait_until(lambda: streaming(b, sid))  # worker A is in the middle of the model's answer

    answers: list = []
    waiting = threading.Thread(target=lambda: answers.append(
        b.client.post(f"/session/{sid}/message", json=text_prompt("queued on B"), timeout=60)))
    waiting.start()
    wait_until(lambda: len([m for m in b.get(f"/session/{sid}/message").json() if m["info"]["role"] == "user"]) == 2)
    first.stop(signal.SIGKILL)
    waiting.join(60)

    [answer] = answers
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["info"]["role"] == "assistant" and body["info"]["time"]["completed"]
    assert text_of(body) == "answered after the crash"
    messages = b.get(f"/session/{sid}/message").json()
    made_again = next(m for m in messages if m["info"]["role"] == "assistant")  # the cut call, made again
    assert "error" not in made_again["info"] and text_of(made_again) == "the long one, made again"
    users = [m["info"]["id"] for m in messages if m["info"]["role"] == "user"]
    assert body["info"]["parentID"] == users[1]
    wait_until(lambda: sid not in b.get("/session/status").json())



def test_thirty_two_concurrent_sync_prompts_each_get_their_own_answer(alice, llm, session_of):
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    sessions = [session_of()["id"] for _ in range(32)]
    llm.script(*[Reply(text="the same answer") for _ in sessions])

    def prompt(sid):
        with httpx.Client(base_url=alice.base_url, headers=alice.client.headers, timeout=120) as client:
            return sid, client.post(f"/session/{sid}/message", json=text_prompt(f"question of {sid}"))

    with ThreadPoolExecutor(len(sessions)) as pool:
        answers = list(pool.map(prompt, sessions))

    for sid, answer in answers:
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["info"]["sessionID"] == sid and body["info"]["time"]["completed"]
        assert text_of(body) == "the same answer"
        [user] = [m for m in alice.get(f"/session/{sid}/message").json() if m["info"]["role"] == "user"]
        assert body["info"]["parentID"] == user["info"]["id"]
    assert llm.pending == 0
    wait_until(lambda: not alice.get("/session/status").json(), timeout=30)
