"""Ordered streams across workers (agentserver/events/sequencer.py): a worker's own events and other workers' events
relayed through Redis race, and a stream used to get 11 before 10 when 11 was local and 10 came from Redis
a moment later; a client reconnecting right after 11 (Last-Event-ID: 11) never saw 10. Forced here: this
test process plays another worker, logs two events and relays them to Redis the wrong way round (or relays
only the later one). PostgreSQL + Redis only."""
import os

import pytest
from django.db import transaction

from tests.events.sse_client import open_stream

pytestmark = pytest.mark.scaled


@pytest.fixture(scope="module")
def second_worker(server_factory):
    return server_factory({"REDIS_URL": os.environ["REDIS_URL"]})


def _logged(persona, count: int):
    """`count` events of the persona with consecutive log ids, as another worker's outbox writes them."""
    from agentserver import ids
    from agentserver.clock import now_ms
    from agentserver.events import bus
    from agentserver.models import EventLog

    events = [bus.Event(type="test.ordered", properties={"seq": n}, owner_id=persona.user.id, directory="/",
                        id=ids.ascending("evt"), time=now_ms()) for n in range(count)]
    with transaction.atomic():
        for event in events:
            row = EventLog.objects.create(owner_id=event.owner_id, type=event.type, directory=event.directory,
                                          event_id=event.id, properties=event.properties, time=event.time)
            event.log_id = row.id
    assert [e.log_id for e in events] == list(range(events[0].log_id, events[0].log_id + count))
    return events


def _relay(*events):
    from agentserver.events import bus

    for event in events:
        bus.bridge().publish({"e": [event.to_wire()]})


def _seqs(frames):
    return [f.data["payload"]["properties"]["seq"] for f in frames]


def test_events_relayed_out_of_order_reach_the_stream_in_id_order(second_worker, alice):
    with open_stream(alice, "/global/event", base_url=second_worker.url) as stream:
        stream.next()
        first, second, third = _logged(alice, 3)
        _relay(third, first, second)
        frames = [stream.next() for _ in range(3)]
    assert [int(f.id) for f in frames] == [first.log_id, second.log_id, third.log_id]
    assert _seqs(frames) == [0, 1, 2]


def test_an_event_that_never_comes_through_redis_is_read_from_the_log(second_worker, alice):
    with open_stream(alice, "/global/event", base_url=second_worker.url) as stream:
        stream.next()
        first, second = _logged(alice, 2)
        _relay(second)  # its publisher died between the log and Redis
        frames = [stream.next() for _ in range(2)]
    assert [int(f.id) for f in frames] == [first.log_id, second.log_id]


def test_a_reconnect_right_after_an_interleaving_misses_nothing(second_worker, alice):
    with open_stream(alice, "/global/event", base_url=second_worker.url) as stream:
        stream.next()
        first, second, third = _logged(alice, 3)
        _relay(second, first)
        seen = stream.next()
    assert int(seen.id) == first.log_id
    _relay(third)
    with open_stream(alice, "/global/event", base_url=second_worker.url,
                     headers={"Last-Event-ID": seen.id}) as again:
        frames = [again.next() for _ in range(3)]
    ids = [int(f.id) for f in frames if f.id is not None]
    assert ids[:2] == [second.log_id, third.log_id]
