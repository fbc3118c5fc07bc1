import time

import pytest

from tests.fakes.fixtures import configure_fake_provider
from tests.runner.sse import EventRecorder


@pytest.fixture
def session_of(alice):
    """A session of alice in her repo, the fake provider configured."""
    def make(persona=alice, **body):
        response = persona.post("/session", params={"directory": str(persona.repo)}, json=body)
        assert response.status_code == 200, response.text
        return response.json()
    return make


@pytest.fixture
def llm(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    return fake_llm


@pytest.fixture
def recorder(alice):
    made = []

    def make(persona=alice, directory=None):
        rec = EventRecorder(persona, directory or persona.repo)
        made.append(rec)
        return rec
    yield make
    for rec in made:
        rec.close()


def text_prompt(text: str, **extra) -> dict:
    return {"parts": [{"type": "text", "text": text}], **extra}


def wait_until(predicate, timeout: float = 20.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition never became true")


def wait_idle(persona, session_id: str, timeout: float = 20.0) -> None:
    wait_until(lambda: session_id not in persona.get("/session/status").json(), timeout)


@pytest.fixture(autouse=True)
def _server_log_on_failure(request, server):
    """Print the server's log tail when a runner test fails (the runner's errors only show there)."""
    start = len(server.log())
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print("---- server log ----\n" + server.log()[start:][-6000:])


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)
