"""Heartbeats keep idle streams (and the proxies in front of them) alive."""
from tests.events.sse_client import open_stream, payload_type


def test_idle_streams_get_heartbeats(fast_server, alice):
    for path, shape in (("/event", "instance"), ("/global/event", "global")):
        with open_stream(alice, path, base_url=fast_server.url) as stream:
            kinds = [payload_type(shape)(stream.next().data) for _ in range(3)]
        assert kinds == ["server.connected", "server.heartbeat", "server.heartbeat"]


def test_heartbeats_carry_no_id_line(fast_server, alice):
    with open_stream(alice, "/global/event", base_url=fast_server.url) as stream:
        stream.next()
        raw = stream.next_raw()
    assert raw.startswith(b'data: {"payload":{"id":"evt_') and b'"type":"server.heartbeat"' in raw
