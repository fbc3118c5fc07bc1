"""A test run killed with SIGKILL (a CI job cancelled, a runner out of memory) takes the live servers it started
with it, and their children: a server left behind holds the test database, a port and its users' sandboxes."""
import os
import select
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT, wait_ended
from tests.hosts.cluster import descendants

INNER = textwrap.dedent("""
    import os
    import threading


    def test_hold_a_server(server, alice):
        # alice's git status runs in her resident sandbox: a child of the server that must end with it too.
        assert alice.get("/api/vcs/status", params={"directory": str(alice.repo)}).status_code == 200
        os.write(int(os.environ["REPORT_FD"]), f"{server.process.pid}\\n".encode())
        threading.Event().wait(600)
""")


@pytest.mark.timeout(300)  # the inner run makes a test database of its own first
def test_a_killed_test_run_takes_its_server_and_its_children_with_it(tmp_path):
    (tmp_path / "test_inner.py").write_text(INNER)
    report, report_to = os.pipe()
    # The embedded deployment in a data directory of its own: the inner run has its own SQLite test database.
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "AGENTSERVER_DATA_DIR") and not k.startswith("PYTEST")}
    env.update(AGENTSERVER_DATA_DIR=str(tmp_path / "data"), REPORT_FD=str(report_to))
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "tests.conftest", "-c", str(ROOT / "pytest.ini"),
         "--rootdir", str(ROOT), "--basetemp", str(tmp_path / "inner"), "-q", str(tmp_path / "test_inner.py")],
        cwd=ROOT, env=env, stdout=(tmp_path / "inner.log").open("wb"), stderr=subprocess.STDOUT,
        pass_fds=[report_to], start_new_session=True)
    os.close(report_to)
    try:
        ready, _, _ = select.select([report], [], [], 240)
        line = os.read(report, 64) if ready else b""
        assert line.strip().isdigit(), (tmp_path / "inner.log").read_text(errors="replace")
        server = int(line)
        children = descendants(server)
        assert children, "the server started no child (the resident sandbox)"
        os.kill(run.pid, signal.SIGKILL)
        assert wait_ended({server} | children, timeout=60) == set()
    finally:
        os.close(report)
        if run.poll() is None:
            run.kill()
        run.wait(30)
