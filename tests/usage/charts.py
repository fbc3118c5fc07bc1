"""Usage for the chart tests, counted by usage_app's own service as the runtime counts a call."""
from __future__ import annotations

import datetime as dt

DASHBOARD = "/admin/usage_app/usagerecord/dashboard/"


def today() -> dt.date:
    from usage_app.zone import usage_zone

    return dt.datetime.now(usage_zone()).date()


def spend(person, *, days_ago: int, cost: float, model: str = "big", provider: str = "fake",
          session: str = "ses_charts_a", tokens: tuple[int, int] = (100, 20)) -> None:
    """One model call of `person` half an hour into the day `days_ago` days before today (usage time zone)."""
    from agentserver import ids
    from usage_app.calls import ModelCall
    from usage_app.periods import day_start
    from usage_app.services import do_record_call

    user = getattr(person, "user", person)
    at = day_start(today() - dt.timedelta(days=days_ago)) + dt.timedelta(minutes=30)
    do_record_call(call=ModelCall(
        call_id=ids.ascending("cal"), started_ms=int(at.timestamp() * 1000), person_id=user.id, session_id=session,
        message_id="", agent="build", purpose="step", provider_id=provider, model_id=model,
        input_tokens=tokens[0], output_tokens=tokens[1], reasoning_tokens=0, cache_read_tokens=0,
        cache_write_tokens=0, cost=cost, priced=True, usage_reported=True, credential="config", duration_ms=10,
        outcome="completed"))


def api_rows(persona, **params) -> list[dict]:
    response = persona.get("/api/usage", params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def period_of(labels: list[str]) -> dict:
    """The API's since/until of a chart's days (until is excluded)."""
    last = dt.date.fromisoformat(labels[-1])
    return {"since": labels[0], "until": (last + dt.timedelta(days=1)).isoformat()}
