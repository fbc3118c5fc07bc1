"""The browser's session cookie works on the API only when the request comes from this server's own pages:
a page on another site never rides it, for reads as well as writes, on HTTP routes, event streams and PTY
WebSockets. Token clients are unchanged, and bob's cookie never shows alice's sessions, files or terminals."""
import asyncio
import json

import httpx
import pytest
import websockets

from tests.web.conftest import SAME_ORIGIN, sign_in_form

pytestmark = pytest.mark.long_running(seconds=15)  # scheduled before shorter files (tests/conftest.py)

CROSS_SITE = [
    {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"},
    {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"},  # another port or subdomain is another origin
    {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://evil.example"},  # a browser without fetch metadata
    {"Sec-Fetch-Site": "none", "Origin": "null"},
    {"Referer": "http://evil.example/page"},
    {},  # no word from the browser at all
]


@pytest.fixture
def alice_session(alice, alice_cookies) -> httpx.Client:
    return alice_cookies


def test_the_cookie_works_from_the_servers_own_pages(alice_session, alice, server):
    assert alice_session.get("/path", headers=SAME_ORIGIN).json()["home"] == str(alice.root)
    origin = {"Origin": server.url, "Sec-Fetch-Site": "same-origin"}
    created = alice_session.post("/session", params={"directory": str(alice.repo)}, json={}, headers=origin)
    assert created.status_code == 200, created.text
    # Plain HTTP to a host other than the loopback: browsers send no fetch metadata, but a same-origin Referer.
    assert alice_session.get("/session", headers={"Referer": f"{server.url}/"}).status_code == 200
    # The person typing an API URL in the address bar.
    assert alice_session.get("/session", headers={"Sec-Fetch-Site": "none"}).status_code == 200


@pytest.mark.parametrize("headers", CROSS_SITE, ids=[str(h) for h in CROSS_SITE])
def test_the_cookie_is_refused_from_elsewhere_for_reads(alice_session, headers):
    response = alice_session.get("/session", headers=headers)
    assert response.status_code == 401
    assert response.json()["name"] == "UnauthorizedError"
    assert response.headers["www-authenticate"] == 'Session realm="agentserver"'  # no password prompt
    assert alice_session.get("/file/content", params={"path": "README.md"}, headers=headers).status_code == 401


@pytest.mark.parametrize("headers", CROSS_SITE, ids=[str(h) for h in CROSS_SITE])
def test_the_cookie_is_refused_from_elsewhere_for_writes(alice_session, alice, headers):
    from sessions_app.models import Session

    response = alice_session.post("/session", params={"directory": str(alice.repo)}, json={}, headers=headers)
    assert response.status_code == 401
    response = alice_session.patch("/config", json={"share": "disabled"}, headers=headers)
    assert response.status_code == 401
    assert Session.objects.count() == 0
    assert alice.get("/config").json().get("share") != "disabled"


def test_a_same_site_page_cannot_send_a_cookie_with_a_text_plain_body(alice_session):
    response = alice_session.patch("/config", content=b'{"share": "manual"}',
                                   headers={**SAME_ORIGIN, "Content-Type": "text/plain"})
    assert response.status_code == 403


def test_event_streams_take_the_cookie_only_from_own_pages(alice_session, server):
    for path in ("/global/event", "/event", "/api/event"):
        with alice_session.stream("GET", path, headers={"Sec-Fetch-Site": "cross-site"}) as refused:
            assert refused.status_code == 401, path
            assert refused.headers["www-authenticate"].startswith("Session "), path
        with alice_session.stream("GET", path, headers=SAME_ORIGIN) as stream:
            assert stream.status_code == 200, path
            first = next(stream.iter_lines())
            assert "server.connected" in first


def _ws_url(server, pty_id: str) -> str:
    return server.url.replace("http://", "ws://") + f"/pty/{pty_id}/connect"


async def _first_close_or_data(url: str, headers: dict) -> tuple[str, object]:
    async with websockets.connect(url, additional_headers=headers, open_timeout=20) as socket:
        try:
            message = await asyncio.wait_for(socket.recv(), 20)
            return "data", message
        except websockets.ConnectionClosed as closed:
            return "closed", closed.rcvd.code if closed.rcvd else None


def test_a_terminal_socket_takes_the_cookie_only_from_own_origin(alice_session, alice, server):
    pty = alice.post("/pty", params={"directory": str(alice.repo)},
                     json={"command": "/bin/sh", "args": ["-c", "echo ready; sleep 30"]}).json()
    cookie = f"sessionid={alice_session.cookies['sessionid']}"
    url = _ws_url(server, pty["id"])
    kind, value = asyncio.run(_first_close_or_data(url, {"Cookie": cookie, "Origin": server.url}))
    assert kind == "data"
    kind, value = asyncio.run(_first_close_or_data(url, {"Cookie": cookie, "Origin": "http://evil.example"}))
    assert (kind, value) == ("closed", 4403)
    kind, value = asyncio.run(_first_close_or_data(url, {"Cookie": cookie}))  # not a browser: no cookie then
    assert (kind, value) == ("closed", 4401)


def test_a_cors_listed_origin_still_cannot_ride_the_cookie(server_factory, alice):
    other = "http://127.0.0.1:1"
    live = server_factory({"AGENTSERVER_CORS_ORIGINS": other})
    with httpx.Client(base_url=live.url, timeout=30) as client:
        assert sign_in_form(client, "alice", "alice-password").status_code == 302
        response = client.get("/session", headers={"Origin": other, "Sec-Fetch-Site": "same-site"})
        assert response.status_code == 401
        # ...while its name and token work, as for any client of the API.
        response = client.get("/session", headers={"Origin": other, "Authorization": f"Bearer {alice.token}"})
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == other
        preflight = client.options(
            "/pty/pty_x/connect-token", headers={"Origin": other, "Access-Control-Request-Method": "POST",
                                                 "Access-Control-Request-Headers": "authorization,x-opencode-ticket"})
        assert preflight.status_code == 200
        assert "x-opencode-ticket" in preflight.headers["access-control-allow-headers"].lower()


def test_bobs_cookie_never_shows_alices_sessions_files_or_terminals(server, alice, bob):
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={"title": "alice only"}).json()
    pty = alice.post("/pty", params={"directory": str(alice.repo)},
                     json={"command": "/bin/sh", "args": ["-c", "sleep 30"]}).json()
    with httpx.Client(base_url=server.url, timeout=30) as bob_browser:
        assert sign_in_form(bob_browser, "bob", "bob-password").status_code == 302
        assert bob_browser.get(f"/session/{session['id']}", headers=SAME_ORIGIN).status_code == 404
        titles = [s["title"] for s in bob_browser.get("/session", headers=SAME_ORIGIN).json()]
        assert "alice only" not in titles
        everything = bob_browser.get("/api/session", headers=SAME_ORIGIN).json()["data"]
        assert session["id"] not in [s["id"] for s in everything]
        assert bob_browser.get(f"/pty/{pty['id']}", headers=SAME_ORIGIN).status_code == 404
        read = bob_browser.get("/file/content", params={"path": str(alice.repo / "README.md"),
                                                        "directory": str(alice.repo)}, headers=SAME_ORIGIN)
        assert read.status_code == 403
        cookie = f"sessionid={bob_browser.cookies['sessionid']}"
        kind, value = asyncio.run(_first_close_or_data(_ws_url(server, pty["id"]),
                                                       {"Cookie": cookie, "Origin": server.url}))
        assert (kind, value) == ("closed", 4404)


def test_token_clients_are_unchanged(server, alice):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        bearer = client.get("/session", headers={"Authorization": f"Bearer {alice.token}"})
        basic = client.get("/session", auth=("alice", alice.token))
        query = client.get("/session", params={"auth_token": alice.basic_auth_token})
        assert bearer.status_code == basic.status_code == query.status_code == 200
        # No session middleware for them: no cookie is ever set on a token request.
        assert "set-cookie" not in bearer.headers and "vary" not in {k.lower() for k in bearer.headers
                                                                     if bearer.headers[k] == "Cookie"}
        assert client.get("/session", headers={"Authorization": "Bearer as_wrong"}).status_code == 401
        assert client.get("/session").status_code == 401
        health = client.get("/global/health").json()
        assert health["healthy"] is True and json.dumps(health)
