"""The launcher itself (in this process, real bubblewrap): a staff root of `/` does not bring the host back,
and expose= shows one binary, nothing beside it."""
import secrets
import select
import shutil
import subprocess
import time

from django.conf import settings

from agentserver.sandbox import launcher as sandbox


def test_a_staff_root_of_slash_gets_the_working_directory_not_the_host(db, tmp_path, django_user_model):
    staff = django_user_model.objects.create_user(username="root-staff", password="x", is_staff=True)
    work = tmp_path / "work"
    work.mkdir()
    (settings.DATA_DIR / "secret_key").exists() or (settings.DATA_DIR / "secret_key").write_text("s")
    script = (f"cat {settings.DATA_DIR}/secret_key && echo LEAK-SECRET; ls /proc/1/root/ >/dev/null 2>&1; "
              "ps -e -o pid= | wc -l; echo made > made.txt && cat made.txt")
    result = sandbox.run(staff, ["/bin/sh", "-c", script], cwd=str(work), roots=["/"])
    output = result.stdout.decode()
    assert "LEAK-SECRET" not in output and "made" in output, (output, result.stderr)
    assert int(output.split()[0]) < 10  # its own PID namespace, not the host's processes
    assert (work / "made.txt").read_text() == "made\n"


def test_expose_shows_a_binary_read_only_and_nothing_beside_it(db, tmp_path, django_user_model):
    user = django_user_model.objects.create_user(username="tool-user", password="x")
    root, tools = tmp_path / "root", tmp_path / "tools"
    root.mkdir()
    tools.mkdir()
    shutil.copy("/usr/bin/echo", tools / "tool")
    (tools / "private.txt").write_text("not for users\n")
    result = sandbox.run(user, ["/bin/sh", "-c", f"{tools}/tool exposed; ls {tools}; echo x > {tools}/tool || echo RO"],
                         cwd=str(root), roots=[str(root)], expose=[str(tools / "tool")])
    assert result.stdout.decode().split() == ["exposed", "tool", "RO"], result.stderr


def test_a_sandbox_killed_the_instant_it_starts_leaves_nothing_running(user_and_root):
    """An abort that lands while bubblewrap is still building the sandbox (session.shell aborted right after
    its start): the kill reaches the sandbox's init whatever bubblewrap was doing, so nothing keeps running.
    Before the fix, bubblewrap's --new-session moved the init out of the killed group before it was bound to
    its parent's life: one abort in a few dozen left the shell's command running (tests/runner/test_shell.py
    reproduces it through the server under load)."""
    user, root = user_and_root
    marker = f"instant-kill-{secrets.token_hex(6)}"
    for attempt in range(60):
        process = sandbox.popen(user, ["/bin/sh", "-c", f"exec sleep 30 {marker}-{attempt}"], cwd=root,
                                roots=[root], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        time.sleep(0.0002 * attempt)  # land at different moments of bubblewrap's set-up (0-12 ms)
        sandbox.kill_group(process.pid)
        process.wait(10)
        with process.stdout:
            ready, _, _ = select.select([process.stdout], [], [], 10)
            assert ready and process.stdout.read() == b"", f"attempt {attempt}: the sandbox's command outlived the kill"


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(child) for child in handle.read().split()]
    except OSError:
        return []


def _process_group(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[2])  # after the command name: state, ppid, pgrp


def test_the_sandboxs_init_stays_in_the_group_kill_group_signals(user_and_root):
    """What makes the kill above certain, checked directly: bubblewrap's init (the child that becomes PID 1 of
    the sandbox) is in the launch's own process group, so `kill_group` reaches it at any moment. With
    bubblewrap's --new-session it made a group of its own, before it was bound to its parent's life."""
    user, root = user_and_root
    process = sandbox.popen(user, ["/bin/sh", "-c", "exec sleep 30"], cwd=root, roots=[root],
                            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not (init := _children(process.pid)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert init, "bubblewrap started no sandbox"
        assert _process_group(init[0]) == process.pid
    finally:
        sandbox.kill_group(process.pid)
        process.wait(10)
