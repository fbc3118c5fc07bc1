"""The own-origin check is scheme-aware: on plain HTTP a page claiming https://<this host> is another origin
and cannot ride the session cookie (HTTP routes, event streams, terminal sockets); with a public URL set, that
URL exactly is ours. A WebSocket handshake naming a Host outside ALLOWED_HOSTS is refused before anything
else, as an HTTP request with it is answered 400."""
import asyncio

import httpx
import pytest
import websockets


def ws_url(base: str, pty_id: str) -> str:
    return base.replace("http://", "ws://") + f"/pty/{pty_id}/connect"


async def first_close_or_data(url: str, headers: dict, **connection) -> tuple[str, object]:
    async with websockets.connect(url, additional_headers=headers, open_timeout=20, **connection) as socket:
        try:
            return "data", await asyncio.wait_for(socket.recv(), 20)
        except websockets.ConnectionClosed as closed:
            return "closed", closed.rcvd.code if closed.rcvd else None


def https_twin(url: str) -> str:
    return url.replace("http://", "https://")


def test_an_https_origin_of_this_host_is_not_ours_on_plain_http(alice_cookies, alice, server):
    for headers in ({"Origin": https_twin(server.url), "Sec-Fetch-Site": "same-site"},
                    {"Origin": https_twin(server.url)}, {"Referer": https_twin(server.url) + "/"}):
        assert alice_cookies.get("/session", headers=headers).status_code == 401, headers
        with alice_cookies.stream("GET", "/global/event", headers=headers) as stream:
            assert stream.status_code == 401, headers
    assert alice_cookies.get("/session", headers={"Origin": server.url}).status_code == 200
    pty = alice.post("/pty", json={"command": "/bin/sh", "args": ["-c", "echo ready; sleep 30"]}).json()
    try:
        cookie = f"sessionid={alice_cookies.cookies['sessionid']}"
        url = ws_url(server.url, pty["id"])
        assert asyncio.run(first_close_or_data(url, {"Cookie": cookie, "Origin": https_twin(server.url)})) == (
            "closed", 4403)
        assert asyncio.run(first_close_or_data(url, {"Cookie": cookie, "Origin": server.url}))[0] == "data"
    finally:
        alice.delete(f"/pty/{pty['id']}")


@pytest.fixture(scope="module")
def public_server(server_factory):
    return server_factory({"AGENTSERVER_PUBLIC_URL": "https://agents.example",
                           "AGENTSERVER_ALLOWED_HOSTS": "127.0.0.1,agents.example"})


def test_with_a_public_url_that_url_exactly_is_ours(public_server, alice):
    from django.test import Client

    # Its cookies are Secure (the public URL is https), so this test, on plain HTTP, carries the cookie itself.
    signed_in = Client()
    signed_in.force_login(alice.user)
    cookie = {"Cookie": f"sessionid={signed_in.cookies['sessionid'].value}"}
    with httpx.Client(base_url=public_server.url, timeout=30, headers=cookie) as browser:
        assert browser.get("/session", headers={"Origin": "https://agents.example"}).status_code == 200
        assert browser.get("/session", headers={"Origin": "http://agents.example"}).status_code == 401
        assert browser.get("/session", headers={"Origin": "https://agents.example:8443"}).status_code == 401


def test_a_websocket_with_a_foreign_host_is_refused_as_http_is(server, alice):
    port = int(server.url.rsplit(":", 1)[1])
    assert httpx.get(f"{server.url}/global/health", headers={"Host": f"evil.example:{port}"}).status_code == 400
    pty = alice.post("/pty", json={"command": "/bin/sh", "args": ["-c", "echo ready; sleep 30"]}).json()
    try:
        url = ws_url(server.url, pty["id"])
        # The handshake names evil.example (its Host header), sent to this server's address.
        foreign = url.replace("127.0.0.1", "evil.example")
        with pytest.raises(websockets.InvalidStatus) as refused:
            asyncio.run(first_close_or_data(foreign, {"Authorization": f"Bearer {alice.token}"},
                                            host="127.0.0.1", port=port))
        assert refused.value.response.status_code == 403
        assert asyncio.run(first_close_or_data(url, {"Authorization": f"Bearer {alice.token}"}))[0] == "data"
    finally:
        alice.delete(f"/pty/{pty['id']}")
