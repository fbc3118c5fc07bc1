"""opencode's own clients (the 1.18.33 binary) against the live `server` fixture.

The binary comes from env OPENCODE_BIN, `.tools/` (scripts/test.sh installs it there when npm is available) or
the peer set-up's /tmp/peer; without it these tests skip. Every client gets a throwaway HOME with its four XDG
directories, so nothing of the machine's own opencode config leaks in."""
from __future__ import annotations

import glob
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.fixtures import configure_fake_provider

OPENCODE_VERSION = "1.18.33"
CANDIDATES = [
    str(ROOT / ".tools/node_modules/opencode-linux-*/bin/opencode"),
    "/tmp/peer/node_modules/opencode-linux-*/bin/opencode",
]
# uvicorn's access line: ... "GET /session?directory=... HTTP/1.1" 200 OK (query and version dropped here)
ACCESS_LINE = re.compile(r'"(?P<request>[A-Z]+ [^"? ]+)[^"]*" (?P<status>\d{3}) ')


def find_opencode() -> str | None:
    explicit = os.environ.get("OPENCODE_BIN")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for pattern in CANDIDATES:
        for path in sorted(glob.glob(pattern)):
            if os.access(path, os.X_OK):
                return path
    return None


@pytest.fixture(scope="session")
def opencode_bin() -> str:
    path = find_opencode()
    if path is None:
        pytest.skip(f"opencode binary not installed (set OPENCODE_BIN, or run scripts/test.sh with npm available: "
                    f"npm install --prefix .tools opencode-ai@{OPENCODE_VERSION})")
    return path


@pytest.fixture
def client_env(tmp_path) -> dict:
    """The environment of one client process: a fresh HOME, no models.dev fetch, no autoupdate."""
    home = tmp_path / "client-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "PYTEST", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
        OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        NO_COLOR="1",
    )
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env


@pytest.fixture
def llm(alice, fake_llm):
    """The fake provider as alice's default model, with edits asking for permission (as the peer set-up)."""
    from projects_app.models import UserConfig

    configure_fake_provider(alice, fake_llm)
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "permission": {"edit": "ask"}}
    config.save(update_fields=["data"])
    return fake_llm


def attach_args(server, persona) -> list[str]:
    return [server.url, "-u", persona.user.username, "-p", persona.token, "--dir", str(persona.repo)]


def run_opencode(opencode_bin, client_env, server, persona, *args: str, timeout: float = 90):
    """`opencode run --attach URL -u USER -p TOKEN --dir REPO ARGS...` → CompletedProcess (text)."""
    command = [opencode_bin, "run", "--attach", *attach_args(server, persona), *args]
    return subprocess.run(command, cwd=persona.repo, env=client_env, capture_output=True, text=True,
                          timeout=timeout)


def server_requests(server) -> list[tuple[str, int]]:
    """(method and path, status) of every request in the server's access log so far."""
    return [(m["request"], int(m["status"])) for m in ACCESS_LINE.finditer(server.log())]


def describe(result, server) -> str:
    failed = [f"{status} {request}" for request, status in server_requests(server) if status >= 400]
    return (f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}\n"
            f"non-2xx answers of the server:\n" + "\n".join(failed))
