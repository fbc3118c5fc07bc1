"""What a sandboxed process is, read from inside: the user's own uid and gid, no supplementary groups, no
capabilities in any set, no_new_privs, the configured resource limits really enforced; and in a terminal the
same, with the terminal its own (Ctrl-C interrupts the foreground job, not the shell)."""
import asyncio
import os
import re

import pytest
from django.conf import settings

from agentserver.sandbox import launcher as sandbox
from tests.pty.conftest import Screen, create_pty, open_socket, shell_body, wait_for

ROOT = os.geteuid() == 0
STATUS = "grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs):' /proc/self/status"
CAPABILITY_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


def _status(text: str) -> dict[str, list[str]]:
    """The fields of /proc/self/status (in a terminal a prompt may precede a line)."""
    fields = {}
    for line in text.splitlines():
        name, _, value = re.sub(r"^(\$ )+", "", line).partition(":")
        if name in ("Uid", "Gid", "Groups", "NoNewPrivs", *CAPABILITY_SETS):
            fields[name] = value.split()
    return fields


def assert_unprivileged(fields: dict[str, list[str]], user) -> None:
    assert fields["NoNewPrivs"] == ["1"], fields
    assert all(fields[name] == ["0000000000000000"] for name in ("CapPrm", "CapEff", "CapAmb")), fields
    if ROOT:  # setpriv drops the rest; unprivileged bubblewrap keeps the server's own uid and groups
        uid = str(settings.SANDBOX_UID_BASE + user.pk)
        assert fields["Uid"] == [uid] * 4 and fields["Gid"] == [uid] * 4, fields
        assert fields["Groups"] == [], fields
        assert fields["CapInh"] == fields["CapBnd"] == ["0000000000000000"], fields


@pytest.fixture
def server_in_a_group():
    """As root, this (server) process in a supplementary group too, so that a sandbox keeping it would show."""
    saved = os.getgroups()
    if ROOT:
        os.setgroups([*saved, 4242])
    yield
    if ROOT:
        os.setgroups(saved)


@pytest.mark.parametrize("offline", [True, False])
def test_a_process_has_the_users_identity_and_no_privileges(user_and_root, server_in_a_group, offline):
    user, root = user_and_root
    result = sandbox.run(user, ["/bin/sh", "-c", STATUS], cwd=root, roots=[root], offline=offline)
    assert result.returncode == 0, result.stderr
    assert_unprivileged(_status(result.stdout.decode()), user)


def test_the_configured_limits_are_in_force(user_and_root):
    user, root = user_and_root
    limits = settings.SANDBOX_LIMITS
    result = sandbox.run(user, ["/bin/bash", "-c", "ulimit -t; ulimit -v; ulimit -f; ulimit -n; ulimit -u"],
                         cwd=root, roots=[root])
    cpu, memory, size, files, processes = result.stdout.decode().split()
    assert (int(cpu), int(memory), int(size), int(files)) == (
        limits["cpu_seconds"], limits["memory_mb"] * 1024, limits["file_mb"] * 1024, limits["open_files"])
    if ROOT:
        assert int(processes) == limits["processes"]


def test_the_limits_stop_what_exceeds_them(user_and_root, settings):
    user, root = user_and_root
    settings.SANDBOX_LIMITS = {**settings.SANDBOX_LIMITS, "file_mb": 1, "open_files": 16, "cpu_seconds": 1}
    script = ("head -c 3000000 /dev/zero > big 2>/dev/null; wc -c < big; "
              "for i in $(seq 32); do exec {fd}</dev/null 2>/dev/null || { echo NOFILE-STOPPED; break; }; done; "
              "(while :; do :; done); echo CPU-STOPPED-$?")
    result = sandbox.run(user, ["/bin/bash", "-c", script], cwd=root, roots=[root], timeout=60)
    lines = result.stdout.decode().split()
    assert lines[0] == str(1024 * 1024), lines  # SIGXFSZ at the limit, the file no larger
    assert "NOFILE-STOPPED" in lines, lines
    assert {"CPU-STOPPED-152", "CPU-STOPPED-137"} & set(lines), lines  # SIGXCPU, or SIGKILL at the hard limit


async def test_a_terminal_is_the_users_own_and_unprivileged(bob):
    pty = create_pty(bob, **shell_body())
    async with open_socket(bob, pty["id"]) as ws:
        screen = Screen(ws)
        await ws.send(f"{STATUS}; echo STATUS-$((6*7))\r")
        text = await screen.expect("STATUS-42")
        assert_unprivileged(_status(text.replace("\r", "")), bob.user)
        await ws.send("sleep 60; echo NOT-INTERRUPTED\r")
        await screen.expect("NOT-INTERRUPTED\r\n")  # (the echo of the line: the shell has read it)
        await asyncio.sleep(0.5)
        await ws.send("\x03")  # SIGINT from the terminal to its foreground job; the shell stays
        await ws.send("echo rc=$?\r")
        text = await screen.expect("rc=130")
        assert text.count("NOT-INTERRUPTED") == 1
        await ws.send("exit\r")
        assert await screen.closed() == 1000
    assert wait_for(lambda: bob.get(f"/pty/{pty['id']}").status_code == 404)
