"""The resident sandbox that runs the server's own git for a user (agentserver/sandbox/resident.py): the same
confinement as a one-shot sandbox (test_entry_points.py sends bob's hostile hooks through it), nothing a
program leaves running outlives it, a killed one is replaced, and new roots get a sandbox that has them."""
import os
import secrets
import stat
import subprocess

import pytest

from agentserver.sandbox import launcher as sandbox
from tests.conftest import wait_ended
from tests.hosts.cluster import descendants
from tests.runner.conftest import wait_until
from tests.sandbox.conftest import is_resident


def _host_processes_with(marker: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker in handle.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _status_paths(persona, directory=None) -> list[str]:
    response = persona.get("/api/vcs/status", params={"directory": str(directory or persona.repo)})
    assert response.status_code == 200, response.text
    return [entry["path"] for entry in response.json()["data"]]


def test_what_a_hostile_hook_leaves_running_is_killed(bob):
    marker = f"left-behind-{secrets.token_hex(6)}"
    hook = bob.repo / ".git" / "daemon-hook.sh"
    hook.write_text(f"#!/bin/bash\nsetsid sleep 300 {marker} </dev/null >/dev/null 2>&1 &\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    _git(bob.repo, "config", "core.fsmonitor", str(hook))
    (bob.repo / "README.md").write_text("changed\n")
    assert _status_paths(bob) == ["README.md"]
    wait_until(lambda: not _host_processes_with(marker.encode()), timeout=10)


def test_a_killed_resident_sandbox_is_replaced(bob):
    (bob.repo / "first.txt").write_text("1\n")
    assert _status_paths(bob) == ["first.txt"]
    # bob's only: his root is among the sandbox's mounts (another test worker's server has residents too).
    residents = [pid for pid in _host_processes_with(str(bob.root).encode()) if is_resident(pid)]
    assert residents, "bob's git did not run in a resident sandbox"
    sandboxed = set(residents).union(*(descendants(pid) for pid in residents))
    for pid in residents:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    # kill() returns before the processes are gone. Under load the sandbox's child, still alive, took the next
    # call's git and died with it; the server does not run again a program whose sandbox ended under it (it may
    # have done part of its work), and that status came back empty. Killed means every one of them has ended.
    assert wait_ended(sandboxed, timeout=30) == set()
    (bob.repo / "second.txt").write_text("2\n")
    for _ in range(3):  # the first call may still find the dead one: it falls back to a one-shot sandbox
        assert _status_paths(bob) == ["first.txt", "second.txt"]


def test_a_new_root_is_in_the_sandbox_that_reads_it(bob, tmp_path):
    from auth_app.tokens import roots_add

    assert _status_paths(bob) == []
    extra = tmp_path / "extra-root"
    (extra / "repo").mkdir(parents=True)
    _git(extra / "repo", "init", "-q")
    (extra / "repo" / "fresh.txt").write_text("fresh\n")
    roots_add(user=bob.user, path=str(extra))
    assert _status_paths(bob, extra / "repo") == ["fresh.txt"]


def test_a_program_run_there_answers_as_in_a_one_shot_sandbox(user_and_root, settings):
    user, root = user_and_root
    runs = {}
    for resident in (True, False):
        settings.SANDBOX_RESIDENT = resident
        runs[resident] = [
            sandbox.run(user, ["/bin/sh", "-c", "cat; echo out; echo err >&2; pwd; exit 3"], cwd=root, roots=[root],
                        input=b"in\n", offline=True),
            sandbox.run(user, ["no-such-program"], cwd=root, roots=[root], offline=True),
        ]
    for made in (runs[True][0], runs[False][0]):
        assert (made.returncode, made.stdout, made.stderr) == (3, f"in\nout\n{root}\n".encode(), b"err\n")
    assert runs[True][1].returncode == runs[False][1].returncode == 127
    settings.SANDBOX_RESIDENT = True
    with pytest.raises(subprocess.TimeoutExpired):
        sandbox.run(user, ["/bin/sleep", "30"], cwd=root, roots=[root], offline=True, timeout=0.5)
    after = sandbox.run(user, ["/bin/echo", "still here"], cwd=root, roots=[root], offline=True)
    assert after.stdout == b"still here\n"


PARENT = "grep -c 'resident sandbox run[s]' /proc/$PPID/cmdline; echo $PPID"


def test_it_is_used_for_offline_programs_only_and_can_be_turned_off(user_and_root, settings):
    user, root = user_and_root
    resident = sandbox.run(user, ["/bin/sh", "-c", PARENT], cwd=root, roots=[root], offline=True)
    assert resident.stdout.split()[0] == b"1", resident  # started by the resident child program
    online = sandbox.run(user, ["/bin/sh", "-c", PARENT], cwd=root, roots=[root])
    assert online.stdout.split() == [b"0", b"1"], online  # a one-shot sandbox: bubblewrap's init is the parent
    settings.SANDBOX_RESIDENT = False
    off = sandbox.run(user, ["/bin/sh", "-c", PARENT], cwd=root, roots=[root], offline=True)
    assert off.stdout.split() == [b"0", b"1"], off


def test_a_program_that_leaves_a_process_holding_its_output_still_returns(user_and_root):
    user, root = user_and_root
    marker = f"holding-{secrets.token_hex(6)}"
    result = sandbox.run(user, ["/bin/sh", "-c", f"setsid sleep 300 {marker} & echo started"], cwd=root,
                         roots=[root], offline=True, timeout=30)
    assert (result.returncode, result.stdout) == (0, b"started\n")
    wait_until(lambda: not _host_processes_with(marker.encode()), timeout=10)


def test_large_input_and_output_pass_through_whole(user_and_root):
    user, root = user_and_root
    data = bytes(range(256)) * 12_000  # 3 MB in, 3 MB back, 5 MB more on stderr
    result = sandbox.run(user, ["/bin/sh", "-c", "cat; head -c 5000000 /dev/zero >&2"], cwd=root, roots=[root],
                         input=data, offline=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout == data
    assert result.stderr == b"\0" * 5_000_000
