"""The HTTP handler's admission (agentserver/http/admission.py): a real thread pool and event loop, no server."""
import asyncio
import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentserver.http.admission import Lanes

LONG = 10.0  # liveness bound: a test that waits this long has found a stuck lane


@pytest.fixture
def pool():
    with ThreadPoolExecutor(8) as executor:
        yield executor


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.started: list[int] = []

    def job(self, number: int, give_up_turn, *, hold: threading.Event | None = None) -> int:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.started.append(number)
        if hold is not None:
            hold.wait(LONG)
        else:
            threading.Event().wait(0.002)
        with self.lock:
            self.now -= 1
        return number * 10


def test_requests_start_in_arrival_order_and_no_more_than_running_at_once(pool):
    """Each request holds its slot until the test lets it end, one at a time in arrival order: the freed slot
    must take the oldest request still queued. (Letting 30 run freely and comparing the order their bodies
    began raced: of two requests taken in order by the two slots' threads, the second thread's could run
    first when the first was preempted between taking its request and starting it.)"""
    recorder = Recorder()
    holds = [threading.Event() for _ in range(30)]

    async def started(count: int) -> list[int]:
        deadline = time.monotonic() + LONG
        while len(recorder.started) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        with recorder.lock:
            return list(recorder.started)

    async def main():
        lanes = Lanes(pool, running=2, slow_after=LONG)
        answers = [lanes.run(functools.partial(recorder.job, hold=holds[n]), n) for n in range(30)]
        for n in range(30):
            assert await started(min(n + 2, 30)) == list(range(min(n + 2, 30)))
            holds[n].set()
        return await asyncio.gather(*answers)

    assert asyncio.run(main()) == [n * 10 for n in range(30)]
    assert recorder.most == 2


def test_one_slot_runs_one_request_at_a_time(pool):
    recorder = Recorder()

    async def main():
        lanes = Lanes(pool, running=1, slow_after=LONG)
        return await asyncio.gather(*(lanes.run(recorder.job, n) for n in range(20)))

    asyncio.run(main())
    assert recorder.most == 1
    assert recorder.started == list(range(20))


def test_a_slow_request_gives_its_slot_up_and_the_next_runs_meanwhile(pool):
    recorder = Recorder()
    hold = threading.Event()

    async def main():
        lanes = Lanes(pool, running=1, slow_after=0.05)
        slow = lanes.run(lambda give_up: recorder.job(1, give_up, hold=hold))
        quick = await asyncio.wait_for(lanes.run(recorder.job, 2), LONG)
        assert not slow.done()
        hold.set()
        return quick, await asyncio.wait_for(slow, LONG)

    assert asyncio.run(main()) == (20, 10)
    assert recorder.most == 2


def test_giving_the_turn_up_lets_the_next_request_run_at_once(pool):
    hold = threading.Event()

    def waits_for_a_child(give_up_turn):
        give_up_turn()
        give_up_turn()  # twice is harmless
        hold.wait(LONG)
        return "slow"

    async def main():
        lanes = Lanes(pool, running=1, slow_after=LONG)
        slow = lanes.run(waits_for_a_child)
        quick = await asyncio.wait_for(lanes.run(lambda give_up: "quick"), LONG)
        hold.set()
        return quick, await asyncio.wait_for(slow, LONG)

    assert asyncio.run(main()) == ("quick", "slow")


def test_an_error_reaches_its_caller_and_the_lane_goes_on(pool):
    def fails(give_up_turn):
        raise ValueError("bad input")

    async def main():
        lanes = Lanes(pool, running=1, slow_after=LONG)
        failing = lanes.run(fails)
        after = lanes.run(lambda give_up: "next")
        with pytest.raises(ValueError, match="bad input"):
            await asyncio.wait_for(failing, LONG)
        return await asyncio.wait_for(after, LONG)

    assert asyncio.run(main()) == "next"


def test_a_caller_that_went_away_does_not_stop_the_lane(pool):
    hold = threading.Event()

    ran = []
    loop_errors = []

    async def main():
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: loop_errors.append(context))
        lanes = Lanes(pool, running=1, slow_after=LONG)
        first = lanes.run(lambda give_up: hold.wait(LONG))
        abandoned = lanes.run(lambda give_up: ran.append("abandoned"))
        abandoned.cancel()
        last = lanes.run(lambda give_up: "last")
        hold.set()
        await asyncio.wait_for(first, LONG)
        return await asyncio.wait_for(last, LONG)

    assert asyncio.run(main()) == "last"
    assert ran == ["abandoned"]  # it still ran (the request's work is not undone), and its answer was dropped
    assert loop_errors == []  # ...without an InvalidStateError from answering a cancelled future


def test_giving_the_turn_up_after_the_request_ended_frees_no_extra_slot(pool):
    recorder = Recorder()
    late = []

    def keeps_its_give_up(give_up_turn):
        late.append(give_up_turn)
        return "done"

    async def main():
        lanes = Lanes(pool, running=1, slow_after=LONG)
        assert await asyncio.wait_for(lanes.run(keeps_its_give_up), LONG) == "done"
        late[0]()  # a stray call after the end must not count as a slot given back
        return await asyncio.gather(*(lanes.run(recorder.job, n) for n in range(10)))

    asyncio.run(main())
    assert recorder.most == 1


def test_reads_and_other_requests_take_turns_each_in_arrival_order(pool):
    """A GET that arrives behind a burst of prompts waits for one of them, not for all."""
    started = []
    hold = threading.Event()

    def job(name, give_up_turn):
        started.append(name)
        if name == "first":
            hold.wait(LONG)
        return name

    async def main():
        lanes = Lanes(pool, running=1, slow_after=LONG)
        first = lanes.run(job, "first")
        writes = [lanes.run(job, f"w{n}") for n in range(4)]
        reads = [lanes.run(job, f"r{n}", reads_only=True) for n in range(2)]
        hold.set()
        return await asyncio.wait_for(asyncio.gather(first, *writes, *reads), LONG)

    assert asyncio.run(main()) == ["first", "w0", "w1", "w2", "w3", "r0", "r1"]
    assert started == ["first", "r0", "w0", "r1", "w1", "w2", "w3"]


def test_a_request_waiting_for_another_threads_sqlite_write_gives_its_turn_up(pool, tmp_path, django_db_blocker):
    """The SQLite backend's writer lock: a request that finds it taken (a runner's transaction) lets the next
    request run meanwhile instead of holding the one turn while it waits."""
    from agentserver.db.sqlite.base import DatabaseWrapper
    from agentserver.workers.loop import request_turn

    def connection():
        return DatabaseWrapper({"NAME": str(tmp_path / "db.sqlite3"), "ENGINE": "agentserver.db.sqlite", "OPTIONS": {},
                                "TIME_ZONE": None, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False,
                                "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False, "USER": "", "PASSWORD": "",
                                "HOST": "", "PORT": "", "TEST": {}}, alias="admission_test")

    django_db_blocker.unblock()  # connections of its own to a file of its own, not the test database
    setup = connection()
    setup.cursor().execute("CREATE TABLE t (x INTEGER)")
    setup.close()
    writer = connection()
    writer.inc_thread_sharing()  # used from the loop's worker threads below
    order = []

    def writes(give_up_turn):
        waiting_writer = connection()
        with request_turn(give_up_turn):
            waiting_writer.cursor().execute("INSERT INTO t VALUES (2)")
        waiting_writer.close()
        order.append("write")
        return "written"

    async def main():
        lanes = Lanes(pool, running=1, slow_after=LONG)
        # Another thread's transaction holds the writer lock (as a runner saving parts does).
        await asyncio.to_thread(writer.set_autocommit, False, force_begin_transaction_with_broken_autocommit=True)
        await asyncio.to_thread(lambda: writer.cursor().execute("INSERT INTO t VALUES (1)"))
        blocked = lanes.run(writes)
        quick = await asyncio.wait_for(lanes.run(lambda give_up: order.append("read") or "read", reads_only=True),
                                       LONG)
        assert not blocked.done()
        await asyncio.to_thread(writer.commit)
        await asyncio.to_thread(writer.close)
        return quick, await asyncio.wait_for(blocked, LONG)

    try:
        assert asyncio.run(main()) == ("read", "written")
    finally:
        django_db_blocker.restore()
    assert order == ["read", "write"]
