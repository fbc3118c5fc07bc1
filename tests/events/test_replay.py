"""A client reconnecting with Last-Event-ID gets what it missed, from the durable log, scoped to the user
and the stream; an id the log no longer covers gets server.resync."""
import os

from tests.events.commands import publish_load
from tests.events.sse_client import open_stream


def dispose(persona, directory):
    assert persona.post("/instance/dispose", params={"directory": str(directory)}).json() is True


def test_reconnect_with_last_event_id_replays_missed_events(alice):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        dispose(alice, repo)
        first = stream.next()
        dispose(alice, alice.root)
        second = stream.next()
    dispose(alice, repo)  # while disconnected

    with open_stream(alice, "/global/event", headers={"Last-Event-ID": first.id}) as stream:
        assert stream.next().data["payload"]["type"] == "server.connected"
        replayed = [stream.next(), stream.next()]
    assert replayed[0].id == second.id and replayed[0].data == second.data
    assert int(replayed[1].id) > int(second.id)
    assert replayed[1].data["directory"] == repo
    assert replayed[1].data["payload"]["type"] == "server.instance.disposed"


def test_last_event_id_also_works_as_query_parameter(alice):
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        dispose(alice, alice.repo)
        first = stream.next()
    dispose(alice, alice.root)
    with open_stream(alice, "/global/event", params={"lastEventId": first.id}) as stream:
        stream.next()
        replayed = stream.next()
    assert replayed.data["directory"] == os.path.realpath(alice.root)


def test_replay_is_scoped_to_the_stream_and_the_user(server, alice, bob):
    repo = os.path.realpath(alice.repo)
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        dispose(alice, alice.root)
        mark = stream.next().id
    publish_load(server, alice, directory=repo, count=2, type="test.ping", rate=1000)
    publish_load(server, alice, directory=alice.root, count=1, type="test.elsewhere", rate=1000)
    publish_load(server, bob, count=3, type="test.bob", rate=1000)

    with open_stream(alice, "/event", params={"directory": repo}, headers={"Last-Event-ID": mark}) as stream:
        stream.next()
        instance = [stream.next() for _ in range(2)]
        dispose(alice, repo)  # the live event after the replay, as a marker
        marker, extra = stream.until(lambda d: d["type"] == "server.instance.disposed")
    assert [f.data["type"] for f in instance] == ["test.ping", "test.ping"]
    assert [f.data["properties"]["seq"] for f in instance] == [0, 1]
    assert extra == []

    with open_stream(alice, "/global/event", headers={"Last-Event-ID": mark}) as stream:
        stream.next()
        dispose(alice, alice.root)
        root = os.path.realpath(alice.root)
        _, replayed = stream.until(lambda d: d["payload"]["properties"].get("directory") == root)
    assert [(f.data["payload"]["type"], f.data["directory"]) for f in replayed] == [
        ("test.ping", repo), ("test.ping", repo), ("test.elsewhere", root), ("server.instance.disposed", repo)]


def test_an_unknown_last_event_id_asks_the_client_to_resync(alice):
    with open_stream(alice, "/global/event", headers={"Last-Event-ID": "999999999"}) as stream:
        assert stream.next().data["payload"]["type"] == "server.connected"
        resync = stream.next()
    assert resync.data["payload"]["type"] == "server.resync"
    assert resync.data["payload"]["properties"] == {}


def test_a_last_event_id_in_other_digits_or_past_a_64_bit_id_asks_the_client_to_resync(alice):
    asked = [{"headers": {"Last-Event-ID": "²".encode("latin-1")}}, {"headers": {"Last-Event-ID": "9" * 19}}] + [
        {"params": {"lastEventId": mark}} for mark in ("²", "١٢", "9" * 60)]
    for mark in asked:
        with open_stream(alice, "/global/event", **mark) as stream:
            assert stream.next().data["payload"]["type"] == "server.connected"
            resync = stream.next()
        assert resync.data["payload"]["type"] == "server.resync", mark


def test_an_id_older_than_the_retained_log_asks_the_client_to_resync(alice):
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        dispose(alice, alice.root)
        dispose(alice, alice.root)
        stream.next()
        second = stream.next()
    from agentserver.models import EventLog

    EventLog.objects.filter(id__lt=int(second.id)).delete()  # as the periodic trim would
    with open_stream(alice, "/global/event", headers={"Last-Event-ID": str(int(second.id) - 2)}) as stream:
        stream.next()
        assert stream.next().data["payload"]["type"] == "server.resync"


def test_the_log_is_trimmed_to_its_retention_and_older_ids_resync(server, alice):
    from agentserver.models import EventLog

    with open_stream(alice, "/global/event") as stream:
        stream.next()
        dispose(alice, alice.root)
        mark = stream.next().id
    publish_load(server, alice, env={"AGENTSERVER_EVENT_LOG_RETENTION": "10"}, count=50, rate=1000)
    assert EventLog.objects.count() <= 20
    assert not EventLog.objects.filter(id=int(mark)).exists()
    with open_stream(alice, "/global/event", headers={"Last-Event-ID": mark}) as stream:
        stream.next()
        assert stream.next().data["payload"]["type"] == "server.resync"
