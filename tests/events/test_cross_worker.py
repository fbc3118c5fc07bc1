"""Several workers (server processes) on PostgreSQL + Redis: an event published in one reaches streams held
by another, and so do closes (dispose, token revocation). The scaled pass only
(PostgreSQL + Redis)."""
import os

import pytest

from tests.events.commands import publish_load
from tests.events.sse_client import open_stream

pytestmark = pytest.mark.scaled


def next_event(stream):
    """The stream's next frame other than a heartbeat: one may come at any time (every 10 s here), and a
    publishing command that starts slowly on a loaded machine lets one in first."""
    while True:
        frame = stream.next()
        if frame.data["payload"]["type"] != "server.heartbeat":
            return frame


@pytest.fixture(scope="module")
def second_worker(server_factory):
    return server_factory({"REDIS_URL": os.environ["REDIS_URL"]})


def test_an_event_published_in_one_worker_reaches_a_stream_on_another(server, second_worker, alice):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/global/event", base_url=second_worker.url) as stream:
        stream.next()
        alice.post("/instance/dispose", params={"directory": repo})  # handled by the first worker
        frame = next_event(stream)
    assert frame.id is not None
    assert frame.data["directory"] == repo
    assert frame.data["payload"]["type"] == "server.instance.disposed"


def test_events_from_a_management_command_arrive_live(server, second_worker, alice):
    with open_stream(alice, "/global/event", base_url=second_worker.url) as stream:
        stream.next()
        publish_load(server, alice, count=3, type="test.ping", rate=1000)
        frames = [next_event(stream) for _ in range(3)]
    assert [f.data["payload"]["properties"]["seq"] for f in frames] == [0, 1, 2]
    assert [int(f.id) for f in frames] == sorted(int(f.id) for f in frames)


def test_deltas_cross_workers_without_an_id(server, second_worker, alice):
    with open_stream(alice, "/global/event", base_url=second_worker.url) as stream:
        stream.next()
        publish_load(server, alice, count=2, delta=True, rate=1000)
        frames = [next_event(stream) for _ in range(2)]
    assert [f.data["payload"]["type"] for f in frames] == ["message.part.delta"] * 2
    assert [f.id for f in frames] == [None, None]


def test_dispose_on_one_worker_closes_instance_streams_on_another(server, second_worker, alice):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/event", params={"directory": repo}, base_url=second_worker.url) as stream:
        stream.next()
        alice.post("/instance/dispose", params={"directory": repo})
        assert [f.data["type"] for f in stream.read_to_end()] == ["server.instance.disposed"]


def test_revoking_a_token_closes_its_streams_on_every_worker(server, second_worker, alice):
    from auth_app.models import ApiToken
    from auth_app.tokens import token_revoke

    with open_stream(alice, "/global/event", base_url=second_worker.url) as one, \
            open_stream(alice, "/global/event") as two:
        one.next()
        two.next()
        token_revoke(token=ApiToken.objects.get(user=alice.user))
        one.read_to_end()
        two.read_to_end()
