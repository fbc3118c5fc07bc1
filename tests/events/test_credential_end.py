"""A stream opened with the browser's session cookie ends when the session does, not only when its row is
deleted: when the password is changed in another browser (the session's auth hash no longer matches) and when
the person is deactivated. Checked by each worker's credential watch (0.5 s heartbeats on fast_server)."""
import httpx
import pytest

from tests.events.sse_client import SseStream
from tests.web.conftest import SAME_ORIGIN, csrf_of, sign_in_form


@pytest.fixture
def signed_in(fast_server, alice):
    """alice's browser, signed in on fast_server."""
    with httpx.Client(base_url=fast_server.url, timeout=30) as browser:
        assert sign_in_form(browser, "alice", "alice-password").status_code == 302
        yield browser


def open_cookie_stream(browser: httpx.Client) -> SseStream:
    return SseStream(str(browser.base_url), "/global/event", read_timeout=15,
                     headers={**SAME_ORIGIN, "Cookie": f"sessionid={browser.cookies['sessionid']}"})


def test_a_cookie_stream_lives_on_while_its_session_stands(signed_in):
    with open_cookie_stream(signed_in) as stream:
        assert stream.status_code == 200
        heartbeats = 0
        while heartbeats < 3:  # as many rounds of the watch
            frame = stream.next()
            assert frame is not None, "the stream of a standing session was closed"
            heartbeats += frame.data["payload"]["type"] == "server.heartbeat"


def test_a_cookie_stream_closes_when_the_password_is_changed_in_another_browser(fast_server, signed_in):
    with open_cookie_stream(signed_in) as stream, httpx.Client(base_url=fast_server.url, timeout=30) as other:
        assert stream.status_code == 200
        assert stream.next().data["payload"]["type"] == "server.connected"
        assert sign_in_form(other, "alice", "alice-password").status_code == 302
        csrf = csrf_of(other.get("/account").text)
        changed = other.post("/account/password", data={
            "csrfmiddlewaretoken": csrf, "old_password": "alice-password",
            "new_password1": "another-Long-passphrase-7", "new_password2": "another-Long-passphrase-7"})
        assert changed.status_code == 302, changed.text
        stream.read_to_end()
        # The browser that changed it stays signed in; the first one is out.
        assert other.get("/session", headers=SAME_ORIGIN).status_code == 200
    with open_cookie_stream(signed_in) as again:
        assert again.status_code == 401


def test_a_cookie_stream_closes_when_the_person_is_deactivated(signed_in, alice):
    with open_cookie_stream(signed_in) as stream:
        assert stream.next().data["payload"]["type"] == "server.connected"
        alice.user.is_active = False
        alice.user.save(update_fields=["is_active"])
        stream.read_to_end()
