import pytest

from tests.runner.conftest import llm, session_of  # noqa: F401  (the runner's fixtures: a fake provider, a session)


def records(**filters) -> list:
    """alice's usage records (the live server writes them to the test database), oldest first."""
    from usage_app.models import UsageRecord

    return list(UsageRecord.objects.filter(**filters).order_by("at", "id"))


def assistant_messages(persona, session_id: str) -> list[dict]:
    return [m for m in persona.get(f"/session/{session_id}/message").json() if m["info"]["role"] == "assistant"]


@pytest.fixture(autouse=True)
def _no_records_left(alice):
    from usage_app.models import UsageDay, UsageRecord

    UsageRecord.objects.all().delete()
    UsageDay.objects.all().delete()
    yield
