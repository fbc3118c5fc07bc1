"""A usage budget spent, as opencode's own clients show it (1.18.33, driven for real): a turn stopped between
two model calls ends with the budget's APIError, which `opencode run --attach` and the TUI (`opencode attach`)
show as they show a provider's error (which budget, how much, when it resets); a new prompt over the budget is
refused with a 429 in the spec's shape, which `opencode run` prints whole, and nothing is stored."""
import datetime as dt
import json

import pytest

from tests.clients.conftest import attach_args, describe, run_opencode, server_requests
from tests.clients.tui import Tui
from tests.fakes.fixtures import Reply
from tests.usage.conftest import add_record

SPENT = "Usage budget spent: your daily budget is $0.01"


def spend_nearly(alice, *, left: float) -> None:
    """A daily budget of $0.01 for alice, with `left` of it still to spend."""
    from usage_app.models import Budget

    Budget.objects.create(scope="person", person=alice.user, period="day", amount="0.01")
    add_record(alice, at=dt.datetime.now(dt.UTC), cost=0.01 - left)


def stopped_between_two_calls(alice, llm) -> None:
    (alice.repo / "notes.txt").write_text("line one\n")
    spend_nearly(alice, left=0.0001)  # the first step's $0.00014 spends it
    llm.script(Reply(tool_calls=[("read", {"filePath": str(alice.repo / "notes.txt")})]), Reply(text="never asked"))


def resets_at() -> str:
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    return f"it resets at {tomorrow.isoformat()} 00:00 UTC"


def test_run_shows_the_budget_stop_between_two_calls(server, alice, llm, opencode_bin, client_env):
    stopped_between_two_calls(alice, llm)
    result = run_opencode(opencode_bin, client_env, server, alice, "read notes")
    assert "Read notes.txt" in result.stderr, describe(result, server)
    assert f"Error: \x1b[0m{SPENT} and $0.01 is spent; {resets_at()}" in result.stderr, describe(result, server)
    assert "never asked" not in result.stdout + result.stderr
    assert len([r for r in llm.requests if "title generator" not in r.system_text.lower()]) == 1


def test_run_prints_the_refusal_of_a_prompt_over_budget_and_nothing_is_stored(server, alice, llm, opencode_bin,
                                                                              client_env):
    spend_nearly(alice, left=0)
    before = len(server_requests(server))
    result = run_opencode(opencode_bin, client_env, server, alice, "hello")
    assert result.returncode == 1, describe(result, server)
    refusal = json.loads(result.stderr.split("Error: \x1b[0m", 1)[1])
    assert refusal["name"] == "BudgetExceededError"
    assert refusal["data"]["message"].startswith(SPENT) and refusal["data"]["budget"] == "your daily budget"
    assert refusal["data"]["amountUSD"] == "0.0100" and refusal["data"]["resetsAt"]
    refused = [r for r, status in server_requests(server)[before:] if status == 429]
    assert len(refused) == 1 and refused[0].endswith("/message"), refused
    session_id = refused[0].split("/")[2]
    assert alice.get(f"/session/{session_id}/message").json() == []
    assert llm.requests == []


@pytest.mark.skipif(not Tui.available(), reason="tmux is not installed")
def test_the_tui_shows_the_budget_stop_between_two_calls(server, alice, llm, opencode_bin, client_env, tmp_path):
    env = {**client_env, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    tui = Tui([opencode_bin, "attach", *attach_args(server, alice)], env, alice.repo, tmp_path / "tui-stderr.txt")
    try:
        tui.wait_for("Ask anything")
        stopped_between_two_calls(alice, llm)
        tui.type("read notes")
        tui.press("Enter")
        screen = tui.wait_for("Usage budget spent")
        tui.save("tui-budget-spent")
        flat = " ".join(screen.split())
        assert "your daily budget is $0.01 and $0.01 is spent" in flat, screen
        assert resets_at() in flat, screen
        assert "never asked" not in screen
    finally:
        tui.close()
