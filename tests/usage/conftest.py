import datetime as dt

import pytest

from tests.runner.conftest import (  # noqa: F401  (the runner's fixtures: a fake provider, a session, its log)
    _server_log_on_failure,
    llm,
    pytest_runtest_makereport,
    session_of,
)


def records(*, in_flight: bool = False, **filters) -> list:
    """The usage records of calls that ended (the live server writes them to the test database), oldest first;
    `in_flight`: those of calls still under way too."""
    from usage_app.models import UsageRecord

    found = UsageRecord.objects.filter(**filters)
    if not in_flight:
        found = found.exclude(outcome="in_flight")
    return list(found.order_by("at", "id"))


def assistant_messages(persona, session_id: str) -> list[dict]:
    return [m for m in persona.get(f"/session/{session_id}/message").json() if m["info"]["role"] == "assistant"]


def assert_totals_match_records() -> None:
    """The day sums equal what the records say: per day, person, session and model (UsageDay) the sums of
    the ended records, for every day that still has its records (a rolled-up day has none left); per day,
    person and model (UsageDayTotal) the sums of UsageDay. What the charts, budgets and session lists read is
    what the records say."""
    from django.db.models import Count, Q, Sum

    from usage_app.models import UsageDay, UsageDayTotal, UsageRecord

    counts = ("calls", "failed_calls", "unpriced_calls", "unreported_calls")
    summed = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens",
              "duration_ms", "cost")

    def keyed(rows, key) -> dict[tuple, tuple]:
        return {tuple(row[name] for name in key): tuple(round(row[name] or 0, 9) for name in (*counts, *summed))
                for row in rows}

    key = ("day", "person_key", "session_id", "provider_id", "model_id")
    records = keyed(UsageRecord.objects.exclude(outcome="in_flight").values(*key).annotate(
        calls=Count("id"), failed_calls=Count("id", filter=Q(outcome__in=("error", "aborted"))),
        unpriced_calls=Count("id", filter=Q(priced=False)),
        unreported_calls=Count("id", filter=Q(usage_reported=False)),
        **{f"{name}": Sum(name) for name in summed}).order_by(), key)
    days = keyed(UsageDay.objects.values(), key)
    recorded_days = {k[0] for k in records}
    assert {k: v for k, v in days.items() if k[0] in recorded_days} == records
    key = ("day", "person_key", "provider_id", "model_id")
    assert keyed(UsageDayTotal.objects.values(), key) == keyed(
        UsageDay.objects.values(*key).annotate(**{name: Sum(name) for name in (*counts, *summed)}).order_by(), key)


@pytest.fixture(autouse=True)
def _no_records_left(alice):
    from usage_app.models import UsageDay, UsageDayTotal, UsageRecord

    UsageRecord.objects.all().delete()
    UsageDay.objects.all().delete()
    UsageDayTotal.objects.all().delete()
    yield


@pytest.fixture
def staff(server, transactional_db):
    """An admin (staff) with an API token, no roots."""
    from tests.conftest import make_persona

    persona = make_persona("stella", server.url, None, staff=True)
    yield persona
    persona.client.close()


def add_record(person, *, at: dt.datetime, session_id: str = "ses_usage_test", provider_id: str = "fake",
               model_id: str = "fake-model", input_tokens: int = 100, output_tokens: int = 20, cost: float = 0.5,
               outcome: str = "completed", priced: bool = True, call_id: str | None = None) -> None:
    """A record as the runtime writes it (through usage_app's own store), at a chosen time: ended (and counted
    in its day's total), or written in flight (`outcome="in_flight"`)."""
    from agentserver import ids
    from usage_app.calls import ModelCall
    from usage_app.store import record_end, record_start

    user = getattr(person, "user", person)
    (record_start if outcome == "in_flight" else record_end)(ModelCall(
        call_id=call_id or ids.ascending("cal"), started_ms=int(at.timestamp() * 1000), person_id=user.id,
        session_id=session_id, message_id="", agent="build", purpose="step", provider_id=provider_id,
        model_id=model_id, input_tokens=input_tokens, output_tokens=output_tokens, reasoning_tokens=0,
        cache_read_tokens=0, cache_write_tokens=0, cost=cost, priced=priced, usage_reported=True,
        credential="config", duration_ms=10, outcome=outcome))
