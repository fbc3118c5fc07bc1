"""A worker on PostgreSQL borrows its connections from a small pool (AGENTSERVER_DB_POOL). The threads that
serve no request (the agent runners', the event loop's executor: permission checks, snapshots, file tools)
must hand theirs back after each call: one that kept its connection for the worker's life left the next
request waiting for the pool's 30 s timeout. Here four sessions run tool calls at once on a pool of three."""
import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.runner.test_restart_and_retry import Remote

pytestmark = pytest.mark.scaled  # the connection pool is PostgreSQL's
SESSIONS = 4


@pytest.fixture(scope="module")
def small_pool_server(server_factory):
    return server_factory({"AGENTSERVER_DB_POOL": "3"})


def test_busy_sessions_on_a_small_pool_leave_connections_for_requests(alice, llm, small_pool_server):
    remote = Remote(alice, small_pool_server.url)
    remote.client.timeout = 10  # the pool's own wait is 30 s: a request stuck behind it fails here
    for index in range(SESSIONS):
        (alice.repo / f"f{index}.txt").write_text(f"file {index}\n")
    reads = [("read", {"filePath": str(alice.repo / f"f{index}.txt")}) for index in range(SESSIONS)]
    llm.script(*[Reply(tool_calls=reads) for _ in range(SESSIONS)], *[Reply(text="read them") for _ in range(SESSIONS)])
    sessions = [remote.post("/session", params={"directory": str(alice.repo)}, json={}).json()
                for _ in range(SESSIONS)]
    for session in sessions:
        response = remote.post(f"/session/{session['id']}/prompt_async", json=text_prompt("read"))
        assert response.status_code == 204, response.text

    def answered(session_id):
        messages = remote.get(f"/session/{session_id}/message").json()
        last = messages[-1]
        return (last["info"]["role"] == "assistant" and last["info"]["time"].get("completed")
                and any(p.get("text") == "read them" for p in last["parts"]))

    wait_until(lambda: all(answered(s["id"]) for s in sessions), timeout=60)
    for session in sessions:
        tools = [p for m in remote.get(f"/session/{session['id']}/message").json() for p in m["parts"]
                 if p["type"] == "tool"]
        assert [p["state"]["status"] for p in tools] == ["completed"] * SESSIONS
    wait_until(lambda: remote.get("/session/status").json() == {}, timeout=30)
    # Idle now: every request still gets a connection at once, however many the busy spell borrowed.
    for _ in range(3 * SESSIONS):
        response = remote.get("/session", params={"directory": str(alice.repo)})
        assert response.status_code == 200 and len(response.json()) >= SESSIONS
