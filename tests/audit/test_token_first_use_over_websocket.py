"""A token's first use from an address over a WebSocket (a terminal's connect, on either mount, with the token
in a header or in `auth_token`) is recorded as over HTTP: once per token and address, with the address the
trusted proxy names and the client's user agent; an address HTTP has already recorded is not recorded again."""
import base64

import pytest
from asgiref.sync import sync_to_async
from websockets.asyncio.client import connect

from auth_app.models import ApiToken
from tests.audit.helpers import last_id, records_after
from tests.pty.conftest import Screen, shell_body, ws_url


@pytest.fixture(scope="module")
def proxied(server_factory):
    return server_factory({"AGENTSERVER_TRUSTED_PROXIES": "127.0.0.1"})


async def _connect(url: str, address: str, headers: dict) -> int | None:
    async with connect(url, additional_headers={"X-Forwarded-For": address, **headers},
                       user_agent_header="terminal-client/1.0") as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        return screen.closed_code


def _first_uses(mark: int) -> list[tuple]:
    return [(row.actor_address, row.actor_user_agent, row.actor_person, row.actor_token, row.object_id)
            for row in records_after(mark, action="token.first_use")]


async def test_a_terminal_connect_from_a_new_address_records_the_tokens_first_use(proxied, alice):
    bearer = {"Authorization": f"Bearer {alice.token}"}
    client = alice.client.__class__(base_url=proxied.url, headers={**bearer, "X-Forwarded-For": "192.0.2.1"},
                                    timeout=30)
    try:
        pty = client.post("/pty", json=shell_body()).json()
        mark = await sync_to_async(last_id)()
        for v2, address in ((False, "203.0.113.5"), (True, "203.0.113.5"), (False, "198.51.100.6"),
                            (False, "192.0.2.1")):
            assert await _connect(ws_url(proxied.url, pty["id"], v2=v2, cursor=-1), address, bearer) is None
        pair = base64.b64encode(f"alice:{alice.token}".encode()).decode()
        assert await _connect(ws_url(proxied.url, pty["id"], cursor=-1, query=f"auth_token={pair}"),
                              "198.51.100.77", {}) is None
        client.delete(f"/pty/{pty['id']}")
    finally:
        client.close()
    token = await ApiToken.objects.aget(user=alice.user)
    assert await sync_to_async(_first_uses)(mark) == [
        (address, "terminal-client/1.0", alice.user.pk, token.pk, str(token.pk))
        for address in ("203.0.113.5", "198.51.100.6", "198.51.100.77")]


async def test_a_refused_connect_still_records_the_tokens_use(proxied, alice):
    mark = await sync_to_async(last_id)()
    async with connect(ws_url(proxied.url, "pty_doesnotexist"),
                       additional_headers={"Authorization": f"Bearer {alice.token}",
                                           "X-Forwarded-For": "203.0.113.99"}) as ws:
        assert await Screen(ws).closed() == 4404
    assert [row[0] for row in await sync_to_async(_first_uses)(mark)] == ["203.0.113.99"]


async def test_a_wrong_token_records_no_use(proxied, alice):
    mark = await sync_to_async(last_id)()
    async with connect(ws_url(proxied.url, "pty_doesnotexist"),
                       additional_headers={"Authorization": "Bearer as_wrong", "X-Forwarded-For": "203.0.113.98"}) as ws:
        assert await Screen(ws).closed() == 4401
    assert await sync_to_async(_first_uses)(mark) == []
