"""pty.connectToken: a short-lived, single-use ticket bound to the user and one PTY, for WebSocket clients
that cannot send credentials (`/pty/{id}/connect?ticket=…`)."""
from websockets.asyncio.client import connect

from agentserver import ids
from tests.pty.conftest import Screen, create_pty, shell_body, ws_url


def ticket_for(persona, pty_id: str) -> dict:
    response = persona.post(f"/pty/{pty_id}/connect-token")
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_ticket_connects_once_without_credentials(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    issued = ticket_for(alice, pty["id"])
    assert set(issued) == {"ticket", "expires_in"} and 0 < issued["expires_in"] <= 60
    async with connect(ws_url(alice, pty["id"], query=f"ticket={issued['ticket']}")) as ws:
        screen = Screen(ws)
        await ws.send("echo ticket-$((40+2))\n")
        await screen.expect("ticket-42")
    async with connect(ws_url(alice, pty["id"], query=f"ticket={issued['ticket']}")) as ws:
        assert await Screen(ws).closed() == 4401


async def test_a_ticket_is_bound_to_its_pty(alice, cleanup_ptys):
    first = create_pty(alice, **shell_body())
    second = create_pty(alice, **shell_body())
    issued = ticket_for(alice, first["id"])
    async with connect(ws_url(alice, second["id"], query=f"ticket={issued['ticket']}")) as ws:
        screen = Screen(ws)
        assert await screen.closed() == 4401
        assert screen.text == ""
    # The failed try used it up.
    async with connect(ws_url(alice, first["id"], query=f"ticket={issued['ticket']}")) as ws:
        assert await Screen(ws).closed() == 4401


async def test_an_expired_or_made_up_ticket_is_refused(alice, cleanup_ptys):
    from asgiref.sync import sync_to_async

    from pty_app.models import PtyTicket

    pty = create_pty(alice, **shell_body())
    issued = ticket_for(alice, pty["id"])
    await sync_to_async(lambda: PtyTicket.objects.update(expires_at=1), thread_sensitive=False)()
    async with connect(ws_url(alice, pty["id"], query=f"ticket={issued['ticket']}")) as ws:
        assert await Screen(ws).closed() == 4401
    async with connect(ws_url(alice, pty["id"], query="ticket=ptk_madeup")) as ws:
        assert await Screen(ws).closed() == 4401


def test_only_a_hash_of_the_ticket_is_stored(alice, cleanup_ptys):
    from pty_app.models import PtyTicket

    pty = create_pty(alice, **shell_body())
    issued = ticket_for(alice, pty["id"])
    row = PtyTicket.objects.get()
    assert issued["ticket"] not in row.key_hash and row.owner_id == alice.user.pk and row.pty_id == pty["id"]


def test_bob_gets_no_ticket_for_alices_pty_and_unknown_ids_are_404(alice, bob, anon, cleanup_ptys):
    from pty_app.models import PtyTicket

    pty = create_pty(alice, **shell_body())
    assert bob.post(f"/pty/{pty['id']}/connect-token").status_code == 404
    assert alice.post(f"/pty/{ids.ascending('pty')}/connect-token").status_code == 404
    assert alice.post("/pty/nope/connect-token").status_code == 400
    assert anon.post(f"/pty/{pty['id']}/connect-token").status_code == 401
    assert not PtyTicket.objects.exists()
