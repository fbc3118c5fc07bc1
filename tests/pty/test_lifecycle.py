"""Processes are reaped: on exit, on remove (the whole process group), when idle, at server shutdown;
no descriptors or children pile up."""
import os

import pytest

from tests.pty.conftest import (
    Screen, children_of, create_pty, open_socket, pid_alive, shell_body, wait_for,
)

pytestmark = pytest.mark.long_running(seconds=35)  # scheduled before shorter files (tests/conftest.py)


def session_of(leader: int) -> list[int]:
    """Every live process started under the terminal's first process (the sandbox gives the shell a session of
    its own inside a PID namespace, so the terminal's processes are its descendants, not its session)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    parents[int(entry)] = int(fields[1])
            except (OSError, ValueError, IndexError):
                pass
    members, frontier = [], [leader]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        members += children
        frontier = children
    return members


def _sleeps(pids: list[int]) -> list[int]:
    found = []
    for pid in pids:
        try:
            if open(f"/proc/{pid}/cmdline", "rb").read().startswith(b"sleep"):
                found.append(pid)
        except OSError:
            pass
    return found


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_remove_kills_the_whole_process_group(alice):
    pty = create_pty(alice, command="/bin/sh", args=["-c", "sleep 1000 & sleep 1000"])
    members = wait_for(lambda: len(_sleeps(session_of(pty["pid"]))) == 2 and session_of(pty["pid"]))
    assert len(_sleeps(members)) == 2, members
    assert alice.delete(f"/pty/{pty['id']}").json() is True
    assert wait_for(lambda: not any(pid_alive(pid) for pid in members)), [p for p in members if pid_alive(p)]


def test_the_terminal_ends_when_its_shell_exits_even_if_a_job_holds_the_tty(alice, alice_events):
    pty = create_pty(alice, command="/bin/sh", args=["-c", "sleep 1000 & exit 4"])
    assert wait_for(lambda: alice.get(f"/pty/{pty['id']}").status_code == 404)
    seen = wait_for(lambda: len(alice_events.of(pty["id"])) >= 3 and alice_events.of(pty["id"]))
    assert ("pty.exited", {"id": pty["id"], "exitCode": 4}) in seen


def test_200_create_exit_cycles_leave_descriptors_and_children_flat(alice, server):
    server_pid = server.process.pid

    def cycle():
        pty = create_pty(alice, command="/bin/sh", args=["-c", "echo cycle"])
        assert wait_for(lambda: alice.get(f"/pty/{pty['id']}").status_code == 404)

    for _ in range(5):
        cycle()
    fds_before, children_before = fd_count(server_pid), len(children_of(server_pid))
    for _ in range(200):
        cycle()
    assert wait_for(lambda: len(children_of(server_pid)) <= children_before), children_of(server_pid)
    assert wait_for(lambda: fd_count(server_pid) <= fds_before + 3), (fds_before, fd_count(server_pid))


async def test_attach_and_remove_cycles_leave_descriptors_flat(alice, server):
    server_pid = server.process.pid

    async def cycle():
        pty = create_pty(alice, **shell_body())
        async with open_socket(alice, pty["id"]) as ws:
            screen = Screen(ws)
            await ws.send("echo attached\r")
            await screen.expect("attached")
            alice.delete(f"/pty/{pty['id']}")
            assert await screen.closed() == 1000

    for _ in range(3):
        await cycle()
    # The server may hold unrelated children started by earlier tests (an MCP server, say): count ours only.
    fds_before, children_before = fd_count(server_pid), set(children_of(server_pid))
    for _ in range(30):
        await cycle()
    assert wait_for(lambda: fd_count(server_pid) <= fds_before + 3), (fds_before, fd_count(server_pid))
    assert wait_for(lambda: all(not pid_alive(p) for p in set(children_of(server_pid)) - children_before))


@pytest.fixture(scope="module")
def idle_server(server_factory):
    return server_factory({"AGENTSERVER_PTY_IDLE_SECONDS": "1"})


async def test_idle_terminals_are_reaped_but_attached_ones_are_not(alice, idle_server):
    client = alice.client.__class__(base_url=idle_server.url, headers=dict(alice.client.headers), timeout=30)
    try:
        idle = client.post("/pty", json={"command": "/bin/sleep", "args": ["1000"]}).json()
        watched = client.post("/pty", json={"command": "/bin/sleep", "args": ["1000"]}).json()
        async with open_socket(alice, watched["id"], base_url=idle_server.url) as ws:
            screen = Screen(ws)
            await screen.until(lambda s: s.cursors)
            assert wait_for(lambda: client.get(f"/pty/{idle['id']}").status_code == 404, timeout=20)
            assert not pid_alive(idle["pid"]) or wait_for(lambda: not pid_alive(idle["pid"]))
            assert client.get(f"/pty/{watched['id']}").status_code == 200
        client.delete(f"/pty/{watched['id']}")
    finally:
        client.close()


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
def test_server_shutdown_kills_its_terminals_and_forgets_them(alice, server_factory, how):
    import signal

    from pty_app.models import Pty

    live = server_factory()
    client = alice.client.__class__(base_url=live.url, headers=dict(alice.client.headers), timeout=30)
    try:
        pty = client.post("/pty", json={"command": "/bin/sh", "args": ["-c", "sleep 1000 & sleep 1000"]}).json()
        members = wait_for(lambda: len(session_of(pty["pid"])) >= 2 and session_of(pty["pid"]))
    finally:
        client.close()
    live.stop(getattr(signal, how))
    assert wait_for(lambda: not any(pid_alive(pid) for pid in members))
    assert not Pty.objects.filter(id=pty["id"]).exists()


def test_a_crashed_workers_terminals_die_with_it_and_leave_the_list(alice, server_factory):
    import signal

    live = server_factory()
    client = alice.client.__class__(base_url=live.url, headers=dict(alice.client.headers), timeout=30)
    try:
        pty = client.post("/pty", json={"command": "/bin/sleep", "args": ["1000"]}).json()
    finally:
        client.close()
    live.stop(signal.SIGKILL)
    assert wait_for(lambda: not pid_alive(pty["pid"]))
    assert alice.get(f"/pty/{pty['id']}").status_code == 404
    assert alice.get("/pty").json() == []
