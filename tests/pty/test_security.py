"""Who may attach, and what the child may see."""
import pytest
from websockets.asyncio.client import connect

from tests.pty.conftest import Screen, create_pty, open_socket, shell_body, wait_for, ws_url


async def test_bob_cannot_attach_to_alices_terminal(alice, bob, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with connect(ws_url(alice, pty["id"]), additional_headers={"Authorization": f"Bearer {bob.token}"}) as ws:
        screen = Screen(ws)
        assert await screen.closed() == 4404
        assert screen.text == "" and screen.cursors == []


async def test_unknown_terminals_close_with_4404(alice):
    async with open_socket(alice, "pty_doesnotexist") as ws:
        assert await Screen(ws).closed() == 4404


async def test_anonymous_and_wrong_credentials_close_with_4401(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with connect(ws_url(alice, pty["id"])) as ws:
        assert await Screen(ws).closed() == 4401
    async with connect(ws_url(alice, pty["id"]), additional_headers={"Authorization": "Bearer nope"}) as ws:
        assert await Screen(ws).closed() == 4401


async def test_a_foreign_origin_closes_with_4403(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with connect(ws_url(alice, pty["id"]), origin="https://evil.example",
                       additional_headers={"Authorization": f"Bearer {alice.token}"}) as ws:
        screen = Screen(ws)
        assert await screen.closed() == 4403
        assert screen.text == ""


@pytest.fixture(scope="module")
def capped_server(server_factory):
    return server_factory({"AGENTSERVER_PTY_MAX_PER_USER": "2", "SECRET_KEY": "server-secret-key-value",
                           "OPENAI_API_KEY": "sk-provider-secret", "AGENTSERVER_DEBUG": "0"})


def _client(persona, live):
    return persona.client.__class__(base_url=live.url, headers=dict(persona.client.headers), timeout=30)


async def test_the_child_environment_holds_no_server_secret(alice, capped_server):
    client = _client(alice, capped_server)
    try:
        response = client.post("/pty", json={"command": "/bin/sh", "args": ["-c", "env; echo END-OF-ENV; exec cat"],
                                             "env": {"MY_VAR": "mine"}})
        pty = response.json()
        async with open_socket(alice, pty["id"], base_url=capped_server.url, cursor=0) as ws:
            text = await Screen(ws).expect("END-OF-ENV")
        client.delete(f"/pty/{pty['id']}")
    finally:
        client.close()
    variables = dict(line.split("=", 1) for line in text.replace("\r", "").splitlines() if "=" in line)
    for secret in ("server-secret-key-value", "sk-provider-secret", "sqlite:", capped_server.env["DATABASE_URL"]):
        assert secret not in text
    leaked = [name for name in variables
              if name.startswith(("DJANGO_", "AGENTSERVER_")) or name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL",
                                                                          "OPENAI_API_KEY")]
    assert leaked == []
    assert variables["TERM"] == "xterm-256color"
    assert variables["HOME"].endswith(f"/users/{alice.user.pk}/home")  # the sandbox's per-user HOME
    assert variables["MY_VAR"] == "mine"
    assert "PATH" in variables


def test_the_per_user_cap_is_enforced_with_a_clear_error(alice, bob, capped_server):
    alice_client, bob_client = _client(alice, capped_server), _client(bob, capped_server)
    try:
        first = alice_client.post("/pty", json=shell_body()).json()
        alice_client.post("/pty", json=shell_body())
        refused = alice_client.post("/pty", json=shell_body())
        assert refused.status_code == 429
        assert refused.json()["name"] == "TooManyRequestsError"
        assert "at most 2" in refused.json()["data"]["message"]
        assert bob_client.post("/pty", json=shell_body()).status_code == 200  # the cap is per user
        alice_client.delete(f"/pty/{first['id']}")
        assert alice_client.post("/pty", json=shell_body()).status_code == 200
    finally:
        for client in (alice_client, bob_client):
            for pty in client.get("/pty").json():
                client.delete(f"/pty/{pty['id']}")
            client.close()
    assert wait_for(lambda: alice_client.is_closed)
