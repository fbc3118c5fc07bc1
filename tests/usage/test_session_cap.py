"""AGENTSERVER_USAGE_SESSION_CAP_USD stops one runaway session: once it has spent the cap, its next model
call ends the turn with an APIError saying so, and a new prompt to it is refused; other sessions go on."""
import httpx
import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until
from tests.usage.conftest import records

CAP = {"AGENTSERVER_USAGE_SESSION_CAP_USD": "0.0002"}  # more than one call of the fake ($0.00014), less than two


@pytest.fixture(scope="module")
def capped_server(server_factory):
    return server_factory(CAP)


def test_a_session_over_its_cap_stops_and_another_session_goes_on(alice, llm, capped_server):
    with httpx.Client(base_url=capped_server.url, headers=dict(alice.client.headers), timeout=30) as client:
        def new_session():
            return client.post("/session", params={"directory": str(alice.repo)}, json={"title": "capped"}).json()

        session = new_session()
        llm.script(Reply(tool_calls=[("bash", {"command": "echo hi"})]), Reply(tool_calls=[
            ("bash", {"command": "echo again"})]), Reply(text="never asked"))
        client.post(f"/session/{session['id']}/message", json=text_prompt("loop"))
        wait_until(lambda: client.get("/session/status").json().get(session["id"]) is None)
        messages = [m for m in client.get(f"/session/{session['id']}/message").json()
                    if m["info"]["role"] == "assistant"]
        assert [bool(m["info"].get("error")) for m in messages] == [False, False, True]
        error = messages[-1]["info"]["error"]
        assert error["name"] == "APIError" and "this session's cap is $0.0002" in error["data"]["message"]
        assert len([r for r in records() if r.session_id == session["id"]]) == 2

        refused = client.post(f"/session/{session['id']}/message", json=text_prompt("more"))
        assert refused.status_code == 429 and refused.json()["name"] == "BudgetExceededError"
        other = new_session()
        llm.script(Reply(text="fine"))
        answer = client.post(f"/session/{other['id']}/message", json=text_prompt("hello"))
        assert answer.status_code == 200 and not answer.json()["info"].get("error")
