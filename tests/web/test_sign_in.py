"""Signing in over HTTP: a CSRF-protected form against Django's users, a session cookie that scripts cannot
read and other sites do not get, a `next` that stays on this server, failed attempts throttled per username
and per address (under a concurrent burst too), and signing out."""
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.contrib.sessions.models import Session

from tests.web.conftest import SAME_ORIGIN, csrf_of, sign_in_form

pytestmark = pytest.mark.long_running(seconds=15)  # scheduled before shorter files (tests/conftest.py)


def test_signed_out_browsers_are_sent_to_the_sign_in_page(browser_client):
    for path in ("/", "/L3RtcC9yZXBv/session", "/account"):
        response = browser_client.get(path, headers={"Accept": "text/html"})
        assert response.status_code == 302, path
        assert response.headers["location"].startswith("/signin"), path
    page = browser_client.get("/signin")
    assert page.status_code == 200
    assert "csrfmiddlewaretoken" in page.text and "csrftoken" in page.cookies
    assert page.headers["cache-control"].startswith("max-age=0")
    assert page.headers["x-frame-options"] == "DENY"


def test_api_clients_still_get_json_where_browsers_get_pages(browser_client):
    for method, path in (("GET", "/"), ("GET", "/no/such/route"), ("POST", "/nope"), ("GET", "/assets/nope.js")):
        response = browser_client.request(method, path)
        assert response.status_code == 404, path
        assert response.json() == {"name": "NotFoundError", "data": {"message": f"No route: {method} {path}"}}


def test_signing_in_sets_an_http_only_same_site_cookie(browser_client, alice):
    response = sign_in_form(browser_client, "alice", "alice-password", next_path="/account")
    assert response.status_code == 302 and response.headers["location"] == "/account"
    set_cookie = [v for k, v in response.headers.multi_items() if k == "set-cookie" and v.startswith("sessionid=")][0]
    assert "HttpOnly" in set_cookie and "SameSite=Lax" in set_cookie and "Secure" not in set_cookie
    assert browser_client.get("/account").status_code == 200


def test_the_cookie_is_secure_behind_tls(server_factory, alice):
    """A reverse proxy on the loopback, named in AGENTSERVER_TRUSTED_PROXIES, terminates TLS."""
    tls = {"X-Forwarded-Proto": "https"}
    server = server_factory({"AGENTSERVER_TRUSTED_PROXIES": "127.0.0.1"})
    with httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/signin", headers=tls)
        assert "Secure" in page.headers["set-cookie"]
        csrf = page.headers["set-cookie"].split("csrftoken=")[1].split(";")[0]
        response = client.post("/signin", data={"username": "alice", "password": "alice-password",
                                                "csrfmiddlewaretoken": csrf_of(page.text)},
                               headers={**tls, "Cookie": f"csrftoken={csrf}",
                                        "Origin": server.url.replace("http://", "https://")})
        assert response.status_code == 302, response.text
        session_cookie = [v for k, v in response.headers.multi_items()
                          if k == "set-cookie" and v.startswith("sessionid=")][0]
        assert "Secure" in session_cookie and "HttpOnly" in session_cookie


def test_a_wrong_password_opens_no_session(browser_client, alice):
    response = sign_in_form(browser_client, "alice", "wrong")
    assert response.status_code == 401
    assert "Wrong username or password." in response.text
    assert "sessionid" not in browser_client.cookies
    assert Session.objects.count() == 0
    unknown = sign_in_form(browser_client, "nobody", "wrong")
    assert unknown.status_code == 401 and "Wrong username or password." in unknown.text


def test_a_nul_character_in_the_form_is_a_clear_400(browser_client, alice):
    for username, password in (("ali\x00ce", "alice-password"), ("alice", "alice\x00password")):
        response = sign_in_form(browser_client, username, password)
        assert response.status_code == 400 and "Enter your username and password." in response.text


def test_the_form_needs_its_csrf_token(browser_client, alice):
    browser_client.get("/signin")
    response = browser_client.post("/signin", data={"username": "alice", "password": "alice-password"})
    assert response.status_code == 403
    assert Session.objects.count() == 0


def test_next_never_leaves_the_server(browser_client, alice):
    for target in ("https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:alert(1)"):
        browser_client.cookies.clear()
        response = sign_in_form(browser_client, "alice", "alice-password", next_path=target)
        assert response.status_code == 302 and response.headers["location"] == "/", target


def test_a_disabled_user_cannot_sign_in(browser_client, alice):
    alice.user.is_active = False
    alice.user.save(update_fields=["is_active"])
    assert sign_in_form(browser_client, "alice", "alice-password").status_code == 401


def test_signing_out_needs_a_post_with_the_csrf_token(alice_cookies):
    assert alice_cookies.get("/signout").status_code == 405
    assert alice_cookies.post("/signout").status_code == 403
    assert alice_cookies.get("/session", headers=SAME_ORIGIN).status_code == 200
    token = csrf_of(alice_cookies.get("/account").text)
    old_cookie = alice_cookies.cookies["sessionid"]
    response = alice_cookies.post("/signout", data={"csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response.headers["location"] == "/signin"
    with httpx.Client(base_url=str(alice_cookies.base_url), cookies={"sessionid": old_cookie}) as stale:
        assert stale.get("/session", headers=SAME_ORIGIN).status_code == 401


@pytest.fixture
def throttled(server_factory):
    """A server with small limits: 3 failures per username, 6 per address."""
    return server_factory({"AGENTSERVER_SIGNIN_FAILURES_PER_USER": "3", "AGENTSERVER_SIGNIN_FAILURES_PER_ADDRESS": "6"})


def _burst(url: str, username: str, attempts: int, *, password: str = "wrong") -> list[int]:
    def one(_):
        with httpx.Client(base_url=url, timeout=120) as client:
            return sign_in_form(client, username, password).status_code

    with ThreadPoolExecutor(attempts) as pool:
        return list(pool.map(one, range(attempts)))


def test_a_burst_of_wrong_passwords_is_held_at_the_limit(throttled, alice):
    statuses = _burst(throttled.url, "alice", 12)
    assert sorted(statuses) == [401] * 3 + [429] * 9, statuses
    with httpx.Client(base_url=throttled.url, timeout=60) as client:
        locked = sign_in_form(client, "alice", "alice-password")
        assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0
        assert "Too many failed sign-ins" in locked.text
    assert Session.objects.count() == 0


def test_the_address_limit_holds_across_usernames(throttled, alice, bob):
    statuses = [s for name in ("x1", "x2", "x3") for s in _burst(throttled.url, name, 2)]
    assert statuses.count(401) == 6
    with httpx.Client(base_url=throttled.url, timeout=60) as client:
        assert sign_in_form(client, "bob", "bob-password").status_code == 429


def test_a_success_clears_the_username_count(throttled, alice):
    with httpx.Client(base_url=throttled.url, timeout=60) as client:
        for _ in range(2):
            assert sign_in_form(client, "alice", "wrong").status_code == 401
        assert sign_in_form(client, "alice", "alice-password").status_code == 302
    with httpx.Client(base_url=throttled.url, timeout=60) as client:
        for _ in range(3):
            assert sign_in_form(client, "alice", "wrong").status_code == 401
        assert sign_in_form(client, "alice", "wrong").status_code == 429


def test_signing_out_closes_the_browsers_open_event_streams(alice_cookies):
    """The stream opened with the cookie ends with the session at once, as a revoked token's stream does (the
    read timeout is below the heartbeat interval, when the periodic check would otherwise catch it)."""
    token = csrf_of(alice_cookies.get("/account").text)
    with alice_cookies.stream("GET", "/global/event", headers=SAME_ORIGIN, timeout=8) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        assert "server.connected" in next(lines)
        with httpx.Client(base_url=str(alice_cookies.base_url), cookies=dict(alice_cookies.cookies)) as same_browser:
            assert same_browser.post("/signout", data={"csrfmiddlewaretoken": token}).status_code == 302
        rest = list(lines)  # returns only when the server ends the stream; the read timeout fails it otherwise
    assert not any("server.connected" in line for line in rest)
