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
