"""What a client sees on the socket: resize, several clients, replay by cursor, exit."""
import asyncio
import os

import pytest

from tests.pty.conftest import Screen, create_pty, open_socket, shell_body, wait_for

pytestmark = pytest.mark.long_running(seconds=15)  # scheduled before shorter files (tests/conftest.py)


async def test_resize_is_seen_by_stty_size(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"]) as ws:
        screen = Screen(ws)
        assert alice.put(f"/pty/{pty['id']}", json={"size": {"rows": 40, "cols": 120}}).status_code == 200
        await ws.send("stty size\r")
        await screen.expect("40 120")
        assert alice.patch(f"/api/pty/{pty['id']}", json={"size": {"rows": 33, "columns": 77}}).status_code == 200
        await ws.send("stty size\r")
        await screen.expect("33 77")


async def test_two_clients_both_receive_the_output(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"]) as first, open_socket(alice, pty["id"]) as second:
        one, two = Screen(first), Screen(second)
        await one.until(lambda s: s.cursors)
        await two.until(lambda s: s.cursors)
        await first.send("echo from-$((1+0))-first\r")
        await one.expect("from-1-first")
        await two.expect("from-1-first")
        await second.send("echo from-$((1+1))-second\r")
        await one.expect("from-2-second")
        await two.expect("from-2-second")


async def test_the_terminal_outlives_its_socket_and_replays_by_cursor(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"]) as ws:
        screen = Screen(ws)
        await ws.send("echo first-$((6*7))\r")
        await screen.expect("first-42")
    # Output produced while nobody is attached is kept too.
    async with open_socket(alice, pty["id"], cursor=-1) as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        assert screen.text == ""
        mark = screen.cursors[0]
        await ws.send("echo second-$((7*7))\r")
        await screen.expect("second-49")
    async with open_socket(alice, pty["id"], cursor=0) as ws:
        everything = Screen(ws)
        await everything.until(lambda s: s.cursors)
        assert "first-42" in everything.text and "second-49" in everything.text
        assert everything.cursors[0] == len(everything.text.encode())
    async with open_socket(alice, pty["id"], cursor=mark) as ws:
        tail = Screen(ws)
        await tail.until(lambda s: s.cursors)
        assert "first-42" not in tail.text and "second-49" in tail.text
        assert everything.text.endswith(tail.text)


async def test_no_cursor_means_replay_everything_then_the_cursor_frame(alice, cleanup_ptys):
    pty = create_pty(alice, command="/bin/sh", args=["-c", "printf 'ready-\\303\\251\\n'; exec cat"])
    async with open_socket(alice, pty["id"]) as ws:
        await Screen(ws).expect("ready-é")
    async with open_socket(alice, pty["id"]) as ws:
        first = await asyncio.wait_for(ws.recv(), 10)
        assert isinstance(first, str) and "ready-é" in first
        control = await asyncio.wait_for(ws.recv(), 10)
        assert control == b'\x00{"cursor":' + str(len(first.encode())).encode() + b"}"


async def test_large_pastes_arrive_whole_and_the_server_stays_responsive(alice, cleanup_ptys):
    pty = create_pty(alice, command="/bin/sh", args=["-c", "stty -echo; sleep 2; wc -c"])
    payload = ("x" * 1023 + "\n") * 1024  # 1 MiB while the child is not reading
    async with open_socket(alice, pty["id"]) as ws:
        screen = Screen(ws)
        await ws.send(payload)
        assert alice.get("/pty").status_code == 200  # the event loop is not stuck writing
        await ws.send(b"\x04")
        await screen.expect(str(len(payload)), timeout=30)


async def test_exit_closes_sockets_publishes_events_and_leaves_the_list(alice, alice_events):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"]) as ws:
        screen = Screen(ws)
        await ws.send("exit 7\r")
        assert await screen.closed() == 1000
    assert wait_for(lambda: alice.get(f"/pty/{pty['id']}").status_code == 404)
    assert alice.get("/pty").json() == []
    seen = wait_for(lambda: len(alice_events.of(pty["id"])) >= 3 and alice_events.of(pty["id"]))
    assert seen == [("pty.created", {"info": pty}), ("pty.exited", {"id": pty["id"], "exitCode": 7}),
                    ("pty.deleted", {"id": pty["id"]})]


async def test_a_short_lived_command_is_gone_without_anyone_attached(alice, alice_events):
    pty = create_pty(alice, command="/bin/sh", args=["-c", "echo bye; exit 3"])
    assert wait_for(lambda: alice.get(f"/pty/{pty['id']}").status_code == 404)
    seen = wait_for(lambda: len(alice_events.of(pty["id"])) >= 3 and alice_events.of(pty["id"]))
    assert [kind for kind, _ in seen] == ["pty.created", "pty.exited", "pty.deleted"]
    assert seen[1][1]["exitCode"] == 3


async def test_multibyte_output_is_never_split_into_replacement_characters(alice, cleanup_ptys):
    pty = create_pty(alice, command="/bin/sh",
                     args=["-c", "read x; yes 'é€😀' | head -n 40000; echo UTF''-DONE; exec cat"])
    async with open_socket(alice, pty["id"], cursor=-1) as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        await ws.send("\r")
        await screen.expect("UTF-DONE", timeout=60)
    assert screen.text.count("é€😀") == 40000
    assert "\ufffd" not in screen.text
    async with open_socket(alice, pty["id"], cursor=screen.cursors[0] + 1) as ws:
        replay = Screen(ws)
        await replay.until(lambda s: s.cursors)
    assert "\ufffd" not in replay.text


def _rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def test_a_client_that_stops_reading_slows_the_terminal_instead_of_growing_the_server(alice, server,
                                                                                           cleanup_ptys):
    pty = create_pty(alice, command="/bin/sh", args=["-c", "read x; exec cat /dev/zero | tr '\\0' x"])
    async with open_socket(alice, pty["id"], cursor=-1) as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        before = _rss_bytes(server.process.pid)
        await ws.send("\r")
        await asyncio.sleep(3)  # not reading: the client's and the kernel's buffers fill up
        grown = _rss_bytes(server.process.pid) - before
        assert grown < 64 * 1024 * 1024, f"server grew by {grown / 1e6:.0f} MB"
        await screen.until(lambda s: len(s.text) > 1_000_000)  # and output still flows when read again
    alice.delete(f"/pty/{pty['id']}")
