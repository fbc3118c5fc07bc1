import time

from tests.fakes.fixtures import configure_fake_provider
from tests.fakes.llm import Reply
from tests.sessions.helpers import create_session


def test_deleting_a_busy_session_stops_its_runner_and_removes_it(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    session = create_session(alice)
    sid = session["id"]
    fake_llm.script(Reply(text="slow " * 200, chunks=200, delay=0.05))
    response = alice.post(f"/session/{sid}/prompt_async", json={"parts": [{"type": "text", "text": "go"}]})
    assert response.status_code == 204
    deadline = time.monotonic() + 20
    while sid not in alice.get("/session/status").json():
        assert time.monotonic() < deadline, "session never became busy"
        time.sleep(0.05)

    assert alice.delete(f"/session/{sid}").json() is True
    assert alice.get(f"/session/{sid}").status_code == 404
    deadline = time.monotonic() + 20
    while sid in alice.get("/session/status").json():
        assert time.monotonic() < deadline, "the deleted session stayed busy"
        time.sleep(0.05)
    # the server is still well: a new session works
    assert create_session(alice)["id"] != sid
