"""A usage budget spent, in opencode's web app in chromium: a turn stopped between two model calls shows the
budget's error (which budget, how much, when it resets) as the app shows a provider's error; the next prompt
is refused (429), the app says "Failed to send prompt" with the same message, and nothing is stored."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.clients.test_budget_stop import SPENT, resets_at, stopped_between_two_calls
from tests.web.conftest import screenshot
from tests.web.test_web_app_in_a_browser import (  # noqa: F401
    agent,
    open_new_session,
    page,
    prompt,
    sign_in,
)

pytestmark = pytest.mark.timeout(240)


def test_the_web_app_shows_the_budget_stop_between_two_calls(page, server, alice, agent):  # noqa: F811
    sign_in(page, server)
    page.wait_for_url(f"{server.url}/")
    open_new_session(page)
    stopped_between_two_calls(alice, agent)
    prompt(page, "read notes")
    shown = page.get_by_text(SPENT, exact=False).first
    expect(shown).to_be_visible()
    assert resets_at() in shown.inner_text()
    screenshot(page, "budget-spent")
    assert page.get_by_text("never asked").count() == 0
    [session] = alice.get("/session", params={"directory": str(alice.repo)}).json()
    stored = alice.get(f"/session/{session['id']}/message").json()

    prompt(page, "and now?")
    toast = page.get_by_text("Failed to send prompt")
    expect(toast).to_be_visible()
    expect(page.get_by_text(SPENT, exact=False)).to_have_count(2)  # the stopped turn's, and the refusal's
    screenshot(page, "budget-refused")
    assert alice.get(f"/session/{session['id']}/message").json() == stored
