"""What bob's programs try in every entry point: a probe script that prints a marker for each thing it should
NOT manage (read the secret key, alice's file, the server's code or environment; write outside his roots;
connect to the server's port, PostgreSQL or Redis on the loopback) and proves his own work lands on disk."""
import os
import stat
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings

LEAKS = ("LEAK-", "WROTE-", "CONNECTED-")
ROOT = Path(__file__).resolve().parents[2]


def probe_script(*, alice, bob, server_url: str, tag: str) -> str:
    """A bash script (it uses /dev/tcp) run as bob; ends with PROBE-END and his uid."""
    port = urlparse(server_url).port
    alice_file = alice.root / "alice-private.txt"
    alice_file.write_text("alice's private notes\n")
    return "\n".join([
        f"cat {settings.DATA_DIR}/secret_key >/dev/null 2>&1 && echo LEAK-SECRET",
        f"cat {settings.DATA_DIR}/test.sqlite3 >/dev/null 2>&1 && echo LEAK-DATABASE",
        f"cat {alice_file} >/dev/null 2>&1 && echo LEAK-ALICE",
        f"cat {ROOT}/server/settings.py >/dev/null 2>&1 && echo LEAK-CODE",
        # (the test toolchain's interpreter lives in /root/.pyenv and is exposed read-only; nothing else may be)
        "ls -A /root 2>/dev/null | grep -vx .pyenv | grep -q . && echo LEAK-ROOT-HOME",
        "env | grep -qE '^(SECRET_KEY|DATABASE_URL|REDIS_URL|DJANGO_|AGENTSERVER_)' && echo LEAK-ENV",
        f"echo x > {alice.root}/bob-was-here-{tag} 2>/dev/null && echo WROTE-ALICE",
        f"echo x > {settings.DATA_DIR}/bob-was-here-{tag} 2>/dev/null && echo WROTE-DATA",
        f"for port in {port} 5432 6379; do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && echo CONNECTED-$port; done",
        f"echo mine-{tag} > {bob.root}/own-{tag}.txt && cat {bob.root}/own-{tag}.txt",
        "echo UID=$(id -u)",
        "echo PROBE-END",
    ])


def assert_confined(output: str, *, alice, bob, tag: str) -> None:
    assert "PROBE-END" in output, output
    assert not [line for line in output.splitlines() if line.startswith(LEAKS)], output
    assert f"mine-{tag}" in output
    assert (bob.root / f"own-{tag}.txt").read_text() == f"mine-{tag}\n"  # his work lands in his root
    assert not (alice.root / f"bob-was-here-{tag}").exists()
    assert not (Path(settings.DATA_DIR) / f"bob-was-here-{tag}").exists()
    if os.geteuid() == 0:  # a uid of his own: the kernel separates users, not only the mount view
        assert f"UID={settings.SANDBOX_UID_BASE + bob.user.pk}" in output


def write_hook(bob, probe: str, marker: str) -> Path:
    """An executable in bob's repository that runs the probe into `marker` and passes stdin through (so it
    works as a clean filter as well as an fsmonitor hook)."""
    hook = bob.repo / ".git" / "probe-hook.sh"
    hook.write_text(f"#!/bin/bash\n(\n{probe}\n) > {marker} 2>&1\ncat\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return hook


@pytest.fixture
def probe(alice, bob, server):
    def make(tag: str) -> str:
        return probe_script(alice=alice, bob=bob, server_url=server.url, tag=tag)
    return make


def is_resident(pid: int) -> bool:
    """Whether a process is (in) a resident sandbox (agentserver/sandbox/resident.py): its command line carries
    the child program's text."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"The program a resident sandbox runs" in handle.read()
    except OSError:
        return False


@pytest.fixture
def user_and_root(db, tmp_path, django_user_model):
    """A user of the test database (no live server) and a root directory for in-process launches."""
    user = django_user_model.objects.create_user(username="launch-user", password="x")
    root = tmp_path / "root"
    root.mkdir()
    return user, str(root)
