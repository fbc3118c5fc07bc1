"""Run agentserver's own management commands as subprocesses on the test database (never publish() from
the test process: the server is another process)."""
import subprocess
import sys

from tests.conftest import ROOT


def publish_load(server, persona, env: dict | None = None, **options) -> str:
    args = [sys.executable, "manage.py", "publish_load", "--user", persona.user.username]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        args += [flag] if value is True else [flag, str(value)]
    result = subprocess.run(args, cwd=ROOT, env={**server.env, **(env or {})}, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout
