"""When the browser's session ends while opencode's web app is open (signed out in another tab, the password
changed elsewhere), the app's next call is answered 401 with no Basic challenge (the browser would raise its own
password dialog, and headless the call would never settle), and the page lands on /signin?next=<where it was>.
API clients still get the Basic challenge."""
from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from tests.web.conftest import SAME_ORIGIN, csrf_of

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def page(chromium, server, web_app_copy):
    context = chromium.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(30_000)
    page = context.new_page()
    yield page
    context.close()


def open_the_web_app(page, server) -> list:
    """Sign alice in, wait for the app's home; returns the 401s the page will have been answered, with their
    challenge."""
    unauthorized = []
    page.on("response", lambda response: unauthorized.append(
        (response.url, response.headers.get("www-authenticate"))) if response.status == 401 else None)
    page.goto(f"{server.url}/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password")
    page.click("#signin-form button[type=submit]")
    page.wait_for_url(f"{server.url}/")
    expect(page.get_by_text("Add project").first).to_be_visible()
    return unauthorized


def session_cookie(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "sessionid")


def lands_on_the_sign_in_page(page, server) -> None:
    page.wait_for_url(re.compile(re.escape(f"{server.url}/signin?next=")), timeout=30_000)
    expect(page.get_by_role("heading", name="Sign in to agentserver")).to_be_visible()


def test_signing_out_in_another_tab_sends_the_app_to_the_sign_in_page(page, server, alice):
    unauthorized = open_the_web_app(page, server)
    with httpx.Client(base_url=server.url, cookies={"sessionid": session_cookie(page)}, timeout=30) as other_tab:
        csrf = csrf_of(other_tab.get("/account").text)
        assert other_tab.post("/signout", data={"csrfmiddlewaretoken": csrf},
                              headers={"Origin": server.url}).status_code == 302
    # The app's event stream ends with the session; its reconnection is refused.
    lands_on_the_sign_in_page(page, server)
    assert page.url.startswith(f"{server.url}/signin?next=%2F")
    assert unauthorized, "the app made no call after its session ended"
    assert all(not (challenge or "").lower().startswith("basic") for _, challenge in unauthorized), unauthorized


def test_a_password_changed_elsewhere_sends_the_app_to_the_sign_in_page(page, server, alice):
    unauthorized = open_the_web_app(page, server)
    alice.user.set_password("a-new-password-for-alice")
    alice.user.save()
    lands_on_the_sign_in_page(page, server)
    assert all(not (challenge or "").lower().startswith("basic") for _, challenge in unauthorized), unauthorized


def test_a_browsers_401_carries_no_basic_challenge_and_an_api_clients_does(server, anon):
    for headers in (SAME_ORIGIN, {"Sec-Fetch-Mode": "cors"}, {"Referer": f"{server.url}/session"},
                    {"Origin": server.url}):
        response = anon.get("/session", headers=headers)
        assert response.status_code == 401
        assert not response.headers["WWW-Authenticate"].lower().startswith("basic"), headers
        stream = anon.get("/global/event", headers=headers)
        assert stream.status_code == 401
        assert not stream.headers["WWW-Authenticate"].lower().startswith("basic"), headers
    for headers in ({}, {"Origin": "http://evil.example"}):
        response = anon.get("/session", headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Basic"), headers


def test_the_apps_page_loads_our_session_script_first_under_its_policy(server, alice, web_app_copy):
    from tests.web.conftest import sign_in_form

    with httpx.Client(base_url=server.url, timeout=30) as browser:
        sign_in_form(browser, "alice", "alice-password")
        page = browser.get("/", headers={"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"})
        assert page.status_code == 200
        ours = page.text.index('<script src="/agentserver-session.js">')
        assert ours < page.text.index("<script", ours + 1) and page.text.index("<head") < ours
        script = browser.get("/agentserver-session.js")
        assert script.status_code == 200
        assert script.headers["content-type"].startswith("text/javascript")
        assert "/signin" in script.text
