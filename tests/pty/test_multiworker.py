"""A terminal created on one worker, used through another: the WebSocket, resize and remove are
served through the channel layer (Redis) from the owner. Needs PostgreSQL + Redis (the lead's CI pass)."""

import pytest

from tests.pty.conftest import Screen, create_pty, open_socket, pid_alive, shell_body, wait_for

pytestmark = [pytest.mark.scaled,
              pytest.mark.long_running(seconds=18)]  # scheduled before shorter files (tests/conftest.py)


@pytest.fixture(scope="module")
def second_worker(server_factory):
    return server_factory()


async def test_a_terminal_is_usable_through_a_worker_that_does_not_own_it(alice, second_worker, cleanup_ptys):
    pty = create_pty(alice, **shell_body())  # owned by the first worker
    other = alice.client.__class__(base_url=second_worker.url, headers=dict(alice.client.headers), timeout=30)
    try:
        assert [p["id"] for p in other.get("/pty").json()] == [pty["id"]]
        async with open_socket(alice, pty["id"], base_url=second_worker.url) as remote, \
                open_socket(alice, pty["id"]) as local:
            far, near = Screen(remote), Screen(local)
            await far.until(lambda s: s.cursors)
            await remote.send("echo through-$((20+1))\r")
            await far.expect("through-21")
            await near.expect("through-21")
            assert other.put(f"/pty/{pty['id']}", json={"size": {"rows": 41, "cols": 99}}).status_code == 200
            await remote.send("stty size\r")
            await far.expect("41 99")
        async with open_socket(alice, pty["id"], base_url=second_worker.url, cursor=0) as again:
            replay = Screen(again)
            await replay.until(lambda s: s.cursors)
            assert "through-21" in replay.text
            assert replay.cursors[0] == len(replay.text.encode())
            assert other.delete(f"/pty/{pty['id']}").json() is True
            assert await replay.closed() == 1000
        assert wait_for(lambda: not pid_alive(pty["pid"]))
        assert alice.get(f"/pty/{pty['id']}").status_code == 404
    finally:
        other.close()


async def test_exit_reaches_clients_on_the_other_worker(alice, second_worker):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"], base_url=second_worker.url) as remote:
        screen = Screen(remote)
        await screen.until(lambda s: s.cursors)
        await remote.send("exit 5\r")
        assert await screen.closed() == 1000
    assert wait_for(lambda: alice.get(f"/pty/{pty['id']}").status_code == 404)


async def test_heavy_output_arrives_complete_and_in_order_on_the_other_worker(alice, second_worker):
    pty = create_pty(alice, command="/bin/sh", args=["-c", "read x; seq 1 1000000; echo SEQ''-END; exec cat"])
    async with open_socket(alice, pty["id"], base_url=second_worker.url, cursor=-1) as remote:
        screen = Screen(remote)
        await screen.until(lambda s: s.cursors)
        await remote.send("\r")
        await screen.expect("SEQ-END", timeout=60)
    numbers = [line for line in screen.text.replace("\r", "").split("\n") if line.isdigit()]
    assert numbers == [str(n) for n in range(1, 1000001)]
    alice.delete(f"/pty/{pty['id']}")


async def test_a_slow_client_on_the_other_worker_slows_the_terminal_on_its_owner(alice, server, second_worker):
    import asyncio

    from tests.pty.test_terminal_behaviour import _rss_bytes

    pty = create_pty(alice, command="/bin/sh", args=["-c", "read x; exec cat /dev/zero | tr '\\0' x"])
    async with open_socket(alice, pty["id"], base_url=second_worker.url, cursor=-1) as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        before = {pid: _rss_bytes(pid) for pid in (server.process.pid, second_worker.process.pid)}
        await ws.send("\r")
        await asyncio.sleep(3)
        for pid, rss in before.items():
            assert _rss_bytes(pid) - rss < 64 * 1024 * 1024
        await screen.until(lambda s: len(s.text) > 1_000_000)
    alice.delete(f"/pty/{pty['id']}")
