"""Streams end when their token is revoked, and a client that goes away frees its place: the server
caps open streams per user (2 on fast_server), so a new stream is only accepted once an old one is gone."""
import time

from tests.events.sse_client import open_stream


def test_revoking_the_token_closes_its_streams(fast_server, alice):
    from auth_app.models import ApiToken
    from auth_app.tokens import token_revoke

    with open_stream(alice, "/global/event", base_url=fast_server.url) as stream:
        stream.next()
        token_revoke(token=ApiToken.objects.get(user=alice.user))
        stream.read_to_end()
    with open_stream(alice, "/global/event", base_url=fast_server.url) as stream:
        assert stream.status_code == 401


def test_a_disconnected_client_frees_its_stream(fast_server, alice):
    first = open_stream(alice, "/global/event", base_url=fast_server.url)
    second = open_stream(alice, "/event", base_url=fast_server.url)
    try:
        assert first.next() and second.next()
        with open_stream(alice, "/global/event", base_url=fast_server.url) as third:
            assert third.status_code == 429
            assert third.json()["name"] == "TooManyRequestsError"
        first.close()
        deadline = time.monotonic() + 20
        while True:
            with open_stream(alice, "/global/event", base_url=fast_server.url) as again:
                if again.status_code == 200:
                    assert again.next().data["payload"]["type"] == "server.connected"
                    break
            assert time.monotonic() < deadline, "the closed stream was never freed"
            time.sleep(0.2)
    finally:
        first.close()
        second.close()
