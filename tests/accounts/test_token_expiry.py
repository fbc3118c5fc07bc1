"""API tokens may expire: a token past its `expires` authenticates nowhere (HTTP Bearer and Basic, event
streams, terminal WebSockets), even when this worker has it warm from a moment ago, and the connections it
opened close. `manage.py createtoken --expires-in-days N` makes one; without it a token lasts until revoked."""
import asyncio
import datetime
import io

import httpx
import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from websockets.asyncio.client import connect

from tests.events.sse_client import SseStream
from tests.pty.conftest import Screen, shell_body, ws_url


def expire(persona) -> None:
    from auth_app.models import ApiToken

    ApiToken.objects.filter(user=persona.user).update(expires=timezone.now() - datetime.timedelta(seconds=1))


async def socket_close_code(url: str, token: str) -> int | None:
    async with connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as ws:
        return await Screen(ws).closed(timeout=20)


def test_an_expired_token_authenticates_nowhere_even_when_warm(alice, server):
    assert alice.get("/session").status_code == 200  # warm in the server's cache now
    pty = alice.post("/pty", json=shell_body()).json()
    try:
        expire(alice)
        assert alice.get("/session").status_code == 401
        basic = httpx.get(f"{server.url}/session", auth=(alice.user.username, alice.token))
        assert basic.status_code == 401
        opencode = httpx.get(f"{server.url}/session", auth=("opencode", alice.token))
        assert opencode.status_code == 401
        with SseStream(server.url, "/global/event", headers={"Authorization": f"Bearer {alice.token}"}) as stream:
            assert stream.status_code == 401
        with SseStream(server.url, "/global/event", params={"auth_token": alice.basic_auth_token}) as stream:
            assert stream.status_code == 401
        assert asyncio.run(socket_close_code(ws_url(server.url, pty["id"]), alice.token)) == 4401
    finally:
        from auth_app.models import ApiToken

        ApiToken.objects.filter(user=alice.user).update(expires=None)
        alice.delete(f"/pty/{pty['id']}")


def test_a_token_not_yet_expired_works(alice):
    from auth_app.models import ApiToken

    ApiToken.objects.filter(user=alice.user).update(expires=timezone.now() + datetime.timedelta(days=1))
    assert alice.get("/session").status_code == 200


@pytest.fixture(scope="module")
def fast_server(server_factory):
    """The credential watch runs once per heartbeat: 0.5 s here."""
    return server_factory({"AGENTSERVER_SSE_HEARTBEAT_SECONDS": "0.5"})


def test_a_tokens_open_stream_and_terminal_close_when_it_expires(fast_server, alice):
    headers = {"Authorization": f"Bearer {alice.token}"}
    with httpx.Client(base_url=fast_server.url, headers=headers, timeout=30) as client:
        pty = client.post("/pty", json=shell_body()).json()

    async def run():
        async with connect(ws_url(fast_server.url, pty["id"]), additional_headers=headers) as ws:
            screen = Screen(ws)
            await ws.send("echo alive-$((6*7))\n")
            await screen.expect("alive-42", timeout=20)
            with SseStream(fast_server.url, "/global/event", headers=headers) as stream:
                assert stream.next().data["payload"]["type"] == "server.connected"
                await asyncio.to_thread(expire, alice)
                await asyncio.to_thread(stream.read_to_end)
            return await screen.closed(timeout=30)

    try:
        assert asyncio.run(run()) == 4401
    finally:
        from auth_app.models import ApiToken

        ApiToken.objects.filter(user=alice.user).update(expires=None)
        with httpx.Client(base_url=fast_server.url, headers=headers) as client:
            client.delete(f"/pty/{pty['id']}")


def test_createtoken_makes_a_token_that_expires_after_the_days_given(alice, server):
    from auth_app.models import ApiToken

    out = io.StringIO()
    call_command("createtoken", "alice", "--name", "ci", "--expires-in-days", "30", stdout=out)
    secret = out.getvalue().split()[-1]
    token = ApiToken.objects.get(user=alice.user, name="ci")
    assert datetime.timedelta(days=29) < token.expires - timezone.now() <= datetime.timedelta(days=30)
    assert "expires" in out.getvalue()
    assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    call_command("createtoken", "alice", "--name", "forever", stdout=io.StringIO())
    assert ApiToken.objects.get(user=alice.user, name="forever").expires is None
    for wrong in ("0", "-3", "soon", "99999"):
        with pytest.raises(CommandError):
            call_command("createtoken", "alice", "--expires-in-days", wrong, stderr=io.StringIO())
