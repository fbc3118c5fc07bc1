"""A stream's backlog is bounded: a subscriber that falls behind gets server.resync and is closed (the
client reconnects with Last-Event-ID and the log fills the gap) instead of silently losing events.
Pure in-process: the Subscriber is the real one."""
import json

from agentserver.events.bus import GLOBAL, INSTANCE, Event, Subscriber


def frames(chunk: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in chunk.decode().split("\n") if line.startswith("data: ")]


def event(seq: int, **kw) -> Event:
    return Event(type="test.ping", properties={"seq": seq}, owner_id=1, directory="/d", log_id=seq, **kw)


def test_pending_events_go_out_as_one_chunk_in_order():
    subscriber = Subscriber(owner_id=1, token_id=1, shape=INSTANCE, directory="/d", maxsize=10)
    for seq in range(1, 4):
        subscriber.offer(event(seq))
    chunk = subscriber.take()
    assert [f["properties"]["seq"] for f in frames(chunk)] == [1, 2, 3]
    assert chunk.count(b"id: ") == 3 and subscriber.closing is None


def test_an_overflowing_subscriber_gets_resync_and_closes():
    subscriber = Subscriber(owner_id=1, token_id=1, shape=GLOBAL, maxsize=3)
    for seq in range(1, 6):
        subscriber.offer(event(seq))
    sent = frames(subscriber.take())
    assert [f["payload"]["type"] for f in sent] == ["test.ping"] * 3 + ["server.resync"]
    assert subscriber.dropped == 2 and subscriber.closing == "overflow"


def test_events_already_replayed_are_not_sent_twice():
    subscriber = Subscriber(owner_id=1, token_id=1, shape=INSTANCE, directory="/d", maxsize=10)
    subscriber.replayed_up_to = 2
    for seq in range(1, 4):
        subscriber.offer(event(seq))
    assert [f["properties"]["seq"] for f in frames(subscriber.take())] == [3]


def test_instance_streams_ignore_other_directories():
    subscriber = Subscriber(owner_id=1, token_id=1, shape=INSTANCE, directory="/d", maxsize=10)
    subscriber.offer(Event(type="x", properties={}, owner_id=1, directory="/elsewhere"))
    subscriber.offer(Event(type="x", properties={}, owner_id=1, directory=None))
    assert subscriber.take() == b""
