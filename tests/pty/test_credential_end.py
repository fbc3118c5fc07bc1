"""A terminal's WebSocket is held under the credential that opened it and closes (4401) when that credential
ends: its Bearer token revoked on the account page, its browser signed out, its person deactivated. Only input
sent before the end reaches the shell."""
import asyncio
import threading

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.pty.conftest import Screen, shell_body, ws_url
from tests.web.conftest import csrf_of, sign_in_form


@pytest.fixture(scope="module")
def fast_server(server_factory):
    """The credential watch runs once per heartbeat: 0.5 s here."""
    return server_factory({"AGENTSERVER_SSE_HEARTBEAT_SECONDS": "0.5"})


@pytest.fixture
def browser(fast_server, alice):
    with httpx.Client(base_url=fast_server.url, timeout=30) as client:
        assert sign_in_form(client, "alice", "alice-password").status_code == 302
        yield client


def pty_on(server, persona) -> dict:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {persona.token}"}) as client:
        response = client.post("/pty", json=shell_body())
        assert response.status_code == 200, response.text
        return response.json()


def remove(server, persona, pty_id: str) -> None:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {persona.token}"}) as client:
        client.delete(f"/pty/{pty_id}")


def closed_after(url: str, headers: dict, end) -> tuple[int | None, str]:
    """Open the socket, see the shell answer, run `end()` (in a thread: it may use the ORM), then wait for the
    close; (its code, all the text the socket received)."""
    async def run():
        async with connect(url, additional_headers=headers, max_size=None) as ws:
            screen = Screen(ws)
            await ws.send("echo before-$((6*7))\n")
            await screen.expect("before-42", timeout=20)
            await asyncio.to_thread(end)
            code = await screen.closed(timeout=30)
            return code, screen.text
    return asyncio.run(run())


def test_a_token_socket_closes_when_the_token_is_revoked_on_the_account_page(fast_server, browser, alice):
    from auth_app.models import ApiToken

    pty = pty_on(fast_server, alice)
    token = ApiToken.objects.get(user=alice.user)
    csrf = csrf_of(browser.get("/account").text)
    try:
        answers = []
        code, _ = closed_after(ws_url(fast_server.url, pty["id"]), {"Authorization": f"Bearer {alice.token}"},
                               lambda: answers.append(browser.post(f"/account/tokens/{token.pk}/revoke",
                                                                   data={"csrfmiddlewaretoken": csrf})))
        assert answers[0].status_code == 302 and code == 4401
    finally:
        ApiToken.objects.filter(pk=token.pk).update(revoked=None)
        remove(fast_server, alice, pty["id"])


def test_a_browser_socket_closes_when_the_browser_signs_out(fast_server, browser, alice):
    pty = pty_on(fast_server, alice)
    csrf = csrf_of(browser.get("/account").text)
    headers = {"Cookie": f"sessionid={browser.cookies['sessionid']}", "Origin": fast_server.url}
    answers = []
    try:
        code, _ = closed_after(ws_url(fast_server.url, pty["id"]), headers,
                               lambda: answers.append(browser.post("/signout", data={"csrfmiddlewaretoken": csrf})))
        assert answers[0].status_code == 302 and code == 4401
    finally:
        remove(fast_server, alice, pty["id"])


def test_a_socket_closes_when_its_person_is_deactivated(fast_server, alice):
    pty = pty_on(fast_server, alice)
    done = threading.Event()

    def deactivate():
        alice.user.is_active = False
        alice.user.save(update_fields=["is_active"])
        done.set()

    try:
        code, _ = closed_after(ws_url(fast_server.url, pty["id"]), {"Authorization": f"Bearer {alice.token}"},
                               deactivate)
        assert done.is_set() and code == 4401
    finally:
        alice.user.is_active = True
        alice.user.save(update_fields=["is_active"])
        remove(fast_server, alice, pty["id"])


def ticket_url(server, pty_id: str, **client_options) -> str:
    """A one-time connect URL for `pty_id`, its ticket asked for with `client_options` (headers or cookies)."""
    with httpx.Client(base_url=server.url, **client_options) as client:
        response = client.post(f"/pty/{pty_id}/connect-token")
        assert response.status_code == 200, response.text
        return f"{ws_url(server.url, pty_id)}?ticket={response.json()['ticket']}"


def test_a_ticket_socket_closes_when_the_token_that_asked_for_the_ticket_is_revoked(fast_server, browser, alice):
    from auth_app.models import ApiToken

    pty = pty_on(fast_server, alice)
    token = ApiToken.objects.get(user=alice.user)
    url = ticket_url(fast_server, pty["id"], headers={"Authorization": f"Bearer {alice.token}"})
    csrf = csrf_of(browser.get("/account").text)
    try:
        answers = []
        code, _ = closed_after(url, {}, lambda: answers.append(
            browser.post(f"/account/tokens/{token.pk}/revoke", data={"csrfmiddlewaretoken": csrf})))
        assert answers[0].status_code == 302 and code == 4401
    finally:
        ApiToken.objects.filter(pk=token.pk).update(revoked=None)
        remove(fast_server, alice, pty["id"])


def test_a_ticket_socket_closes_when_the_browser_that_asked_for_the_ticket_signs_out(fast_server, browser, alice):
    pty = pty_on(fast_server, alice)
    url = ticket_url(fast_server, pty["id"], cookies={"sessionid": browser.cookies["sessionid"]},
                     headers={"Origin": fast_server.url})
    csrf = csrf_of(browser.get("/account").text)
    answers = []
    try:
        code, _ = closed_after(url, {}, lambda: answers.append(
            browser.post("/signout", data={"csrfmiddlewaretoken": csrf})))
        assert answers[0].status_code == 302 and code == 4401
    finally:
        remove(fast_server, alice, pty["id"])
