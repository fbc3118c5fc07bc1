"""Publish order survives any mix of publishers: request threads that log their own events (they take the
outbox's turn when it is free) and the event loop (whose events the outbox thread logs). In-process, with
the real outbox, bus and event log on a loop of the test's own."""
import asyncio
import threading

import pytest
from django.db import connection

from agentserver.events import bus
from agentserver.events import publisher as events
from agentserver.events.bus import GLOBAL, Subscriber
from agentserver.models import EventLog
from agentserver.workers import loop as server_loop

pytestmark = pytest.mark.django_db(transaction=True)
OWNER = 737373
THREADS, PER_THREAD, FROM_LOOP = 4, 40, 40


@pytest.fixture
def loop():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def test_events_from_threads_and_the_loop_arrive_logged_complete_and_in_log_order(loop):
    async def subscribe():
        server_loop.capture_running()
        subscriber = Subscriber(owner_id=OWNER, token_id=None, shape=GLOBAL, maxsize=10_000)
        bus.BUS.add(subscriber)
        return subscriber

    subscriber = asyncio.run_coroutine_threadsafe(subscribe(), loop).result(10)

    def publisher(name: str):
        try:
            for seq in range(PER_THREAD):
                events.publish("test.order", {"from": name, "seq": seq}, owner_id=OWNER, directory="/d")
        finally:
            connection.close()

    async def from_loop():
        for seq in range(FROM_LOOP):
            events.publish("test.order", {"from": "loop", "seq": seq}, owner_id=OWNER, directory="/d")
            await asyncio.sleep(0)

    threads = [threading.Thread(target=publisher, args=(f"t{i}",)) for i in range(THREADS)]
    looped = asyncio.run_coroutine_threadsafe(from_loop(), loop)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    looped.result(30)
    assert events.flush(30)

    async def received():
        for _ in range(200):
            if len(subscriber.backlog) >= THREADS * PER_THREAD + FROM_LOOP:
                break
            await asyncio.sleep(0.05)
        bus.BUS.remove(subscriber)
        return list(subscriber.backlog)

    delivered = asyncio.run_coroutine_threadsafe(received(), loop).result(30)
    assert len(delivered) == THREADS * PER_THREAD + FROM_LOOP
    log_ids = [event.log_id for event in delivered]
    assert None not in log_ids
    assert log_ids == sorted(log_ids) and len(set(log_ids)) == len(log_ids)
    for name in [f"t{i}" for i in range(THREADS)] + ["loop"]:
        seqs = [e.properties["seq"] for e in delivered if e.properties["from"] == name]
        assert seqs == list(range(FROM_LOOP if name == "loop" else PER_THREAD))
    assert EventLog.objects.filter(owner_id=OWNER).count() == len(delivered)
