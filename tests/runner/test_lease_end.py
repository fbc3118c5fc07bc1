"""The lease's end (runtime/lease_keeper.py): renewal and release cannot cross, and a runner that has let go
of its session never renews, hands over or releases the lease of a later runner of the same session, even one
in the same worker. Forced here with real lease rows: renewals racing a release, then the earlier runner's
late renewal and release after a later runner took the session."""
import asyncio

from sessions_app.runtime import leases
from sessions_app.runtime.lease_keeper import LeaseKeeper
from tests.sessions.helpers import create_session

WORKER = "worker-under-test"


async def _session_id(persona) -> str:
    return (await asyncio.to_thread(create_session, persona))["id"]


async def test_renewals_racing_a_release_never_read_as_a_lost_lease(alice):
    session_id = await _session_id(alice)
    keeper = LeaseKeeper(session_id, WORKER)
    assert await keeper.acquire()
    renewals = [asyncio.create_task(keeper.renew()) for _ in range(16)]
    await asyncio.sleep(0)
    await keeper.release()
    renewals += [asyncio.create_task(keeper.renew()) for _ in range(16)]
    results = await asyncio.gather(*renewals)
    assert False not in results  # False is what stops a runner: "lost its lease"
    assert results[-1] is None
    assert not await asyncio.to_thread(leases.is_live, session_id)


async def test_an_ended_runner_never_stops_a_later_runner_of_the_same_worker(alice):
    session_id = await _session_id(alice)
    earlier = LeaseKeeper(session_id, WORKER)
    assert await earlier.acquire()
    await earlier.release()
    later = LeaseKeeper(session_id, WORKER)
    assert await later.acquire()
    assert not await earlier.acquire(), "the session is the later runner's now"
    assert await earlier.renew() is None
    await earlier.release()
    await earlier.hand_over()
    assert await later.renew() is True
    assert await asyncio.to_thread(leases.is_live, session_id)


async def test_a_handed_over_lease_is_not_renewed_back_to_life(alice):
    session_id = await _session_id(alice)
    keeper = LeaseKeeper(session_id, WORKER)
    assert await keeper.acquire()
    await keeper.hand_over()
    assert await keeper.renew() is None
    assert not await asyncio.to_thread(leases.is_live, session_id)
    assert session_id in await asyncio.to_thread(leases.dead_sessions)
