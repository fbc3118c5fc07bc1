"""Each stream speaks opencode's framing byte for byte: `data: <json>` frames, server.connected first,
no `event:` lines, and the SSE headers opencode sends."""
import os
import re

from tests.events.sse_client import open_stream

EVT = r"evt_[0-9a-f]{12}[0-9A-Za-z]{14}"


def test_instance_stream_starts_with_server_connected(alice):
    with open_stream(alice, "/event", params={"directory": str(alice.repo)}) as stream:
        assert stream.status_code == 200
        first = stream.next_raw()
    assert re.fullmatch(rf'data: \{{"id":"{EVT}","type":"server.connected","properties":\{{\}}\}}\n\n'.encode(),
                        first), first


def test_global_stream_starts_with_a_bare_payload(alice):
    with open_stream(alice, "/global/event") as stream:
        first = stream.next_raw()
    assert re.fullmatch(
        rf'data: \{{"payload":\{{"id":"{EVT}","type":"server.connected","properties":\{{\}}\}}\}}\n\n'.encode(), first
    ), first


def test_v2_stream_starts_with_an_envelope_for_its_context(alice):
    directory = os.path.realpath(alice.repo)
    with open_stream(alice, "/api/event", params={"directory": directory}) as stream:
        first = stream.next_raw()
    expected = (rf'data: \{{"id":"{EVT}","type":"server.connected","time":\d+,'
                rf'"context":\{{"directory":"{re.escape(directory)}"\}},"payload":\{{\}}\}}\n\n')
    assert re.fullmatch(expected.encode(), first), first


def test_streams_send_opencodes_headers(alice):
    with open_stream(alice, "/global/event") as stream:
        headers = stream.response.headers
    assert headers["content-type"] == "text/event-stream"
    assert headers["cache-control"] == "no-cache, no-transform"
    assert headers["x-accel-buffering"] == "no"
    assert headers["x-content-type-options"] == "nosniff"


def test_logged_events_carry_an_id_line_and_data_only(alice):
    directory = os.path.realpath(alice.repo)
    with open_stream(alice, "/event", params={"directory": directory}) as stream:
        stream.next_raw()
        assert alice.post("/instance/dispose", params={"directory": directory}).json() is True
        raw = stream.next_raw()
    match = re.fullmatch(
        rf'id: (\d+)\ndata: \{{"id":"{EVT}","type":"server.instance.disposed",'
        rf'"properties":\{{"directory":"{re.escape(directory)}"\}}\}}\n\n'.encode(), raw)
    assert match, raw


def test_global_items_name_directory_and_project(alice):
    directory = os.path.realpath(alice.repo)
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        alice.post("/instance/dispose", params={"directory": directory})
        frame = stream.next()
    assert frame.data["directory"] == directory
    assert re.fullmatch(r"[0-9a-f]{40}", frame.data["project"])  # the repo's root commit
    assert list(frame.data) == ["directory", "project", "payload"]
    assert frame.data["payload"]["type"] == "server.instance.disposed"
    assert frame.data["payload"]["properties"] == {"directory": directory}


def test_v2_events_put_resource_data_in_payload_and_runtime_in_context(alice):
    directory = os.path.realpath(alice.repo)
    with open_stream(alice, "/api/event", params={"directory": directory}) as stream:
        stream.next()
        alice.post("/instance/dispose", params={"directory": directory})
        frame = stream.next()
    assert frame.id is not None
    assert list(frame.data) == ["id", "type", "time", "context", "payload"]
    assert frame.data["type"] == "server.instance.disposed"
    assert frame.data["context"] == {"directory": directory}
    assert frame.data["payload"] == {"directory": directory}
