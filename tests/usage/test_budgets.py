"""Budgets are checked before every prompt and every model call: a spent budget refuses a new prompt with a
429 in the spec's shape and stores nothing; a budget spent during a turn ends it with an APIError on the
assistant message that says which budget, how much and when it resets. A person's own budget overrides
their groups'; otherwise the tightest applies."""
import datetime as dt

from django.contrib.auth.models import Group

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle
from tests.usage.conftest import add_record, assistant_messages, records
from usage_app.models import Budget


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def message_count(persona, session_id: str) -> int:
    return len(persona.get(f"/session/{session_id}/message").json())


def test_a_prompt_over_a_spent_budget_is_refused_and_nothing_is_stored(alice, llm, session_of):
    session = session_of(title="no title call")
    Budget.objects.create(scope="person", person=alice.user, period="day", amount="0.01")
    add_record(alice, at=now(), cost=0.02)
    for path, body in ((f"/session/{session['id']}/message", text_prompt("hello")),
                       (f"/session/{session['id']}/prompt_async", text_prompt("hello")),
                       (f"/api/session/{session['id']}/prompt", {"prompt": text_prompt("hello")})):
        response = alice.post(path, json=body)
        assert response.status_code == 429, (path, response.text)
        error = response.json()
        assert error["name"] == "BudgetExceededError"
        assert "your daily budget is $0.01" in error["data"]["message"] and error["data"]["resetsAt"]
    assert message_count(alice, session["id"]) == 0
    assert llm.requests == []


def test_a_budget_spent_during_a_turn_stops_the_next_call_with_an_api_error(alice, llm, session_of):
    session = session_of(title="no title call")
    Budget.objects.create(scope="person", person=alice.user, period="month", amount="0.01")
    add_record(alice, at=now(), cost=0.0099)  # the first step's $0.00014 goes over
    llm.script(Reply(tool_calls=[("bash", {"command": "echo hi"})]), Reply(text="never asked"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("run it")).json()
    wait_idle(alice, session["id"])
    first, second = assistant_messages(alice, session["id"])
    assert "error" not in first["info"] and first["info"]["finish"] == "tool-calls"
    error = second["info"]["error"]
    assert error["name"] == "APIError" and error["data"]["isRetryable"] is False
    assert "your monthly budget is $0.01" in error["data"]["message"]
    assert error["data"]["metadata"]["budget"] == "your monthly budget" and error["data"]["metadata"]["resetsAt"]
    assert answer["info"]["id"] == second["info"]["id"]
    assert len(llm.requests) == 1
    assert [r.outcome for r in records() if r.session_id == session["id"]] == ["completed"]


def test_a_persons_own_budget_overrides_their_groups(alice, llm, session_of):
    session = session_of(title="no title call")
    team = Group.objects.create(name="team")
    alice.user.groups.add(team)
    Budget.objects.create(scope="group", group=team, period="day", amount="0.01")
    add_record(alice, at=now(), cost=0.05)
    assert alice.post(f"/session/{session['id']}/message", json=text_prompt("hi")).status_code == 429
    Budget.objects.create(scope="person", person=alice.user, period="day", amount="10")
    response = alice.post(f"/session/{session['id']}/message", json=text_prompt("hi"))
    assert response.status_code == 200, response.text


def test_the_tightest_of_everyones_and_the_groups_budgets_applies(alice, bob, llm, session_of):
    session = session_of(title="no title call")
    team = Group.objects.create(name="team")
    alice.user.groups.add(team)
    Budget.objects.create(scope="everyone", period="week", amount="100")
    Budget.objects.create(scope="group", group=team, period="week", amount="0.01")
    add_record(alice, at=now(), cost=0.05)
    response = alice.post(f"/session/{session['id']}/message", json=text_prompt("hi"))
    assert response.status_code == 429
    assert "the weekly budget of group team" in response.json()["data"]["message"]
    alice.user.groups.remove(team)  # moved out of the group mid-period: everyone's budget applies now
    assert alice.post(f"/session/{session['id']}/message", json=text_prompt("hi")).status_code == 200


def test_a_budget_lowered_below_what_is_spent_stops_the_next_prompt(alice, llm, session_of):
    session = session_of(title="no title call")
    budget = Budget.objects.create(scope="everyone", period="day", amount="5")
    add_record(alice, at=now(), cost=1.0)
    assert alice.post(f"/session/{session['id']}/message", json=text_prompt("hi")).status_code == 200
    budget.amount = "0.50"
    budget.save()
    assert alice.post(f"/session/{session['id']}/message", json=text_prompt("hi")).status_code == 429


def test_spending_of_yesterday_does_not_count_against_a_daily_budget(alice, llm, session_of):
    session = session_of(title="no title call")
    Budget.objects.create(scope="person", person=alice.user, period="day", amount="1")
    add_record(alice, at=now() - dt.timedelta(days=2), cost=5.0)
    assert alice.post(f"/session/{session['id']}/message", json=text_prompt("hi")).status_code == 200
