"""No stored prompt without an owner: a host that dies after committing a user message and before its runner
takes the session's lease (or right after answering prompt_async's 204) leaves the prompt in the database and
no lease. Another live worker's janitor starts a runner for it within a lease's time; nobody has to prompt
the session again. The dead host is played by storing the user message the way prompting does, with nothing
kicked, which is the state such a host leaves behind."""
import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import wait_until
from tests.sessions.helpers import add_message

FAST = {"AGENTSERVER_LEASE_MS": "4000"}


@pytest.fixture(scope="module")
def fast_server(server_factory):
    return server_factory(FAST)


def test_a_prompt_stored_by_a_host_that_died_before_its_runner_is_answered(alice, llm, fast_server):
    client = alice.client
    session = client.post(f"{fast_server.url}/session", params={"directory": str(alice.repo)}, json={}).json()
    llm.script(Reply(text="answered after all"))
    stranded = add_message(session["id"], texts=("is anybody there?",))

    def answered():
        messages = client.get(f"{fast_server.url}/session/{session['id']}/message").json()
        return [m for m in messages if m["info"]["role"] == "assistant" and m["info"]["time"].get("completed")]

    answers = wait_until(answered, timeout=30)
    assert len(answers) == 1
    assert answers[0]["info"]["parentID"] == stranded["info"]["id"]
    assert [p["text"] for p in answers[0]["parts"] if p["type"] == "text"] == ["answered after all"]
    wait_until(lambda: session["id"] not in client.get(f"{fast_server.url}/session/status").json())
    assert len(answered()) == 1, "answered once"


def test_a_note_stored_with_no_reply_is_never_answered(alice, llm, fast_server):
    from agentserver.clock import now_ms
    from sessions_app.runtime import leases
    from sessions_app.store.messages import NO_REPLY_KEY

    client = alice.client
    session = client.post(f"{fast_server.url}/session", params={"directory": str(alice.repo)}, json={}).json()
    add_message(session["id"], texts=("just context",), **{NO_REPLY_KEY: True})
    assert leases.stranded_sessions(since_ms=now_ms() - 60_000, until_ms=now_ms() + 60_000) == []
