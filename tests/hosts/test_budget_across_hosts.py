"""Two hosts spending against one budget at once: 32 sessions of one person, half started on each host, loop on
tool calls until her daily budget stops them. The spend stays within the calls in flight of the limit (each
session has at most one call under way), every session's turn ends with the budget's APIError, and every call
the model answered is counted exactly once, with the cost its assistant message shows."""
from decimal import Decimal

import pytest

from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.hosts.helpers import via
from tests.runner.conftest import text_prompt, wait_until

pytestmark = pytest.mark.long_running(seconds=18)  # scheduled before shorter files (tests/conftest.py)

SESSIONS = 32
LIMIT = Decimal("0.08")  # reached in the second round of calls: the first is 32 × $0.002
# The fake model's input price is $1 per million tokens: each call costs exactly $0.002.
CALL_COST = Decimal("0.002")
CALL_USAGE = {"input": 2000, "output": 0, "reasoning": 0, "cache_read": 0, "cache_write": 0}


def looping_replies(count: int) -> list[Reply]:
    """A runaway agent: a tool call per step, each with other arguments (the same call three times in a row
    would stop at the doom-loop question instead)."""
    return [Reply(tool_calls=[("todowrite", {"todos": [{"content": f"step {n}", "status": "pending",
                                                        "priority": "low"}]})], usage=CALL_USAGE)
            for n in range(count)]


def lease_hosts() -> set[str]:
    from sessions_app.models import SessionLease

    return {holder.split("#", 1)[0] for holder in SessionLease.objects.values_list("holder", flat=True)}


@pytest.mark.timeout(300)  # 32 sessions' turns on two hosts: 101 s at a load of 15 on two cores
def test_concurrent_sessions_on_two_hosts_stop_within_the_calls_in_flight(alice, fake_llm, hosts_up):
    from usage_app.models import Budget, UsageRecord

    configure_fake_provider(alice, fake_llm)
    Budget.objects.create(scope="person", person=alice.user, period="day", amount=LIMIT)
    most_calls = int(LIMIT / CALL_COST) + SESSIONS
    fake_llm.script(*looping_replies(most_calls + 50))
    sides = [via(alice, "a"), via(alice, "b")]
    sessions = [sides[n % 2].post("/session", json={"title": f"runaway {n}"}).json()["id"] for n in range(SESSIONS)]
    fake_llm.hold()
    for n, sid in enumerate(sessions):
        assert sides[n % 2].post(f"/session/{sid}/prompt_async", json=text_prompt("loop")).status_code == 204
    # Every session's first call is in flight at once, the turns on both hosts.
    wait_until(lambda: len(fake_llm.requests) == SESSIONS, timeout=60, interval=0.2)
    # Both hosts run turns (the test process's own server shares the database and may adopt some too).
    assert {host.hostname for host in hosts_up.hosts.values()} <= lease_hosts()
    fake_llm.release()
    wait_until(lambda: not alice.get("/session/status").json(), timeout=100, interval=0.5)

    records = list(UsageRecord.objects.filter(person_key=alice.user.id))
    spent = sum(Decimal(str(record.cost)) for record in records)
    assert LIMIT <= spent <= LIMIT + SESSIONS * CALL_COST, spent
    # Every request the model answered is one record, none counted twice.
    assert len(records) == len(fake_llm.requests) == len({record.call_id for record in records}), \
        _per_session(records, fake_llm.requests)
    assert {record.outcome for record in records} == {"completed"}

    counted = {record.message_id: record for record in records}
    for sid in sessions:
        assistants = [m["info"] for m in alice.get(f"/session/{sid}/message").json()
                      if m["info"]["role"] == "assistant"]
        *steps, stopped = assistants
        error = stopped.get("error")
        assert error and error["name"] == "APIError", (sid, stopped)
        assert error["data"]["metadata"]["budget"] == "your daily budget"
        assert error["data"]["metadata"]["amountUSD"] == f"{LIMIT:.4f}" and error["data"]["metadata"]["resetsAt"]
        assert "your daily budget is $0.08" in error["data"]["message"]
        assert stopped["id"] not in counted  # the stopped step never reached the model
        for step in steps:
            assert "error" not in step and step["finish"] == "tool-calls", step
            assert counted[step["id"]].cost == step["cost"] == float(CALL_COST)
    assert sum(len(alice.get(f"/session/{sid}/message").json()) for sid in sessions) == \
        SESSIONS * 2 + len(records)  # each session: the prompt, a message per counted call, the stopped one

    for side in sides:  # a new prompt on either host is refused and stores nothing
        refused = side.post(f"/session/{sessions[0]}/message", json=text_prompt("more"))
        assert refused.status_code == 429 and refused.json()["name"] == "BudgetExceededError", refused.text
    assert len(fake_llm.requests) == len(records)


def _per_session(records, requests) -> str:
    """Where records and the model's requests differ, session by session (the requests carry x-session-id),
    and how each of those sessions' records ended, on which worker."""
    from collections import Counter

    asked = Counter(request.headers.get("x-session-id") for request in requests)
    counted = Counter(record.session_id for record in records)
    differ = sorted(sid for sid in set(asked) | set(counted) if asked[sid] != counted[sid])
    lines = [f"{sid}: {asked[sid]} requests, {counted[sid]} records: "
             + ", ".join(f"{r.call_id} {r.outcome} by {r.ended_by} on {r.worker} at {r.at:%H:%M:%S.%f}"
                         for r in records if r.session_id == sid) for sid in differ]
    return "records and requests differ:\n" + "\n".join(lines)
