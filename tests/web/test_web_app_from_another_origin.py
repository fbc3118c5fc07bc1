"""opencode's web app served from another origin (a person's own copy: the opencode binary's `opencode serve`)
and pointed at this server with a name and token, as its server list holds them: it works, terminal
included, when that origin is listed in AGENTSERVER_CORS_ORIGINS."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.fakes.fixtures import configure_fake_provider
from tests.web.conftest import FIRST_ANSWER_MS, RequestLog, TerminalFrames, screenshot
from web_app.install import ThrowawayServer, opencode_binary

pytestmark = [pytest.mark.timeout(240),
              pytest.mark.long_running(seconds=30)]  # scheduled before shorter files (tests/conftest.py)


@pytest.fixture
def own_copy():
    """The person's own opencode, serving its web app on the loopback."""
    binary = opencode_binary()
    assert binary is not None, "no opencode binary: run scripts/setup.sh"
    with ThrowawayServer(binary) as served:
        yield served.url


def test_the_app_on_another_origin_works_with_name_and_token_terminal_included(
        server_factory, own_copy, alice, fake_llm, chromium):
    configure_fake_provider(alice, fake_llm)
    ours = server_factory({"AGENTSERVER_CORS_ORIGINS": own_copy})
    servers = {"list": [{"type": "http", "http": {"url": ours.url, "username": "alice", "password": alice.token}}],
               "projects": {}, "lastProject": {}, "recentlyClosed": {}}
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(
        f"localStorage.setItem('opencode.global.dat:server', {json.dumps(json.dumps(servers))});"
        f"localStorage.setItem('opencode.settings.dat:defaultServerUrl', {json.dumps(ours.url)});")
    page = context.new_page()
    log = RequestLog(page, ours.url)
    terminal = TerminalFrames(page)
    page.goto(f"{own_copy}/")
    # Two servers (its own and ours), each a group in the sidebar with its own "Add project".
    ours_group = page.locator("div").filter(has=page.get_by_text(ours.url.removeprefix("http://"), exact=True)) \
        .filter(has=page.get_by_role("button", name="Add project")).last
    ours_group.get_by_role("button", name="Add project").click()
    page.get_by_text("~/repo/").first.click()
    page.get_by_role("button", name="New session").last.click()
    page.locator("[contenteditable=true]").first.click()
    page.keyboard.type("hi")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Hello from the fake LLM.")).to_be_visible(timeout=FIRST_ANSWER_MS)
    terminal.run("echo cross-origin-$((40+2))")
    assert terminal.wait_for("cross-origin-42"), (terminal.received[-5:], log.entries[-10:])
    screenshot(page, "another-origin-terminal")
    tickets = [(url, status) for method, url, status in log.entries if "/connect-token" in url and method == "POST"]
    assert tickets and all(status == 200 for _, status in tickets), log.entries
    context.close()
