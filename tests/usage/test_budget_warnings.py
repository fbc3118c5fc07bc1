"""Crossing a budget's warning threshold publishes `usage.budget.warning` to the person (and to no one else),
and their account page shows their budgets with what is spent."""
import datetime as dt
import json

import httpx

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt
from tests.runner.sse import EventRecorder
from tests.usage.conftest import add_record
from tests.web.conftest import sign_in_form
from usage_app.models import Budget


class GlobalRecorder(EventRecorder):
    """GET /global/event, whose events come as {directory, payload}: unwrapped into self.events."""

    def __init__(self, persona):
        super().__init__(persona, persona.repo, path="/global/event")

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self._path) as response:
                for line in response.iter_lines():
                    if self._stop:
                        return
                    if line.startswith("data: "):
                        event = json.loads(line[6:]).get("payload") or {}
                        if event.get("type") == "server.connected":
                            self._connected.set()
                        self.events.append(event)
        except (httpx.HTTPError, RuntimeError):
            return


def budget_events(recorder) -> list[dict]:
    return [event["properties"] for event in list(recorder.events) if event.get("type") == "usage.budget.warning"]


def test_a_call_crossing_the_warning_threshold_tells_the_person(alice, bob, llm, session_of):
    Budget.objects.create(scope="person", person=alice.user, period="day", amount="0.01", warn_percent=80)
    add_record(alice, at=dt.datetime.now(dt.timezone.utc), cost=0.0079)  # the fake's $0.00014 crosses 80 %
    mine, theirs = GlobalRecorder(alice), GlobalRecorder(bob)
    try:
        session = session_of(title="no title call")
        llm.script(Reply(text="one"), Reply(text="two"))
        alice.post(f"/session/{session['id']}/message", json=text_prompt("hello"))
        mine.wait_for(lambda event: bool(budget_events(mine)))
        alice.post(f"/session/{session['id']}/message", json=text_prompt("again"))  # no new crossing
        [warning] = budget_events(mine)
        assert warning["kind"] == "warning" and warning["budget"] == "your daily budget"
        assert warning["percent"] == 80 and "80% of your daily budget is spent" == warning["message"]
        assert budget_events(theirs) == []
    finally:
        mine.close()
        theirs.close()


def test_the_account_page_shows_the_budgets_and_what_is_spent(alice, server):
    Budget.objects.create(scope="everyone", period="month", amount="20")
    Budget.objects.create(scope="person", person=alice.user, period="day", amount="2")
    add_record(alice, at=dt.datetime.now(dt.timezone.utc), cost=1.9)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert sign_in_form(client, "alice", "alice-password").status_code == 302
        page = client.get("/account").text
    assert 'id="usage"' in page
    assert "Your daily budget: $1.90 of $2.00 spent (95 %)" in page and "nearly spent" in page
    assert "The monthly budget for everyone: $1.90 of $20.00 spent (9 %)" in page
