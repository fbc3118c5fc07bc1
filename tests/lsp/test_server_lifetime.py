"""A worker stops a language server left unused for AGENTSERVER_LSP_IDLE_SECONDS, and keeps at most
AGENTSERVER_LSP_MAX_SERVERS (the least recently used goes first). Each case runs on its own server."""
import os

import httpx
import pytest

from tests.fakes.fixtures import Reply
from tests.lsp.helpers import FIXED, alive, language_servers_of, wait_for
from tests.runner.conftest import text_prompt

pytestmark = pytest.mark.long_running(seconds=15)  # scheduled before shorter files (tests/conftest.py)


class Remote:
    """alice, talking to a dedicated server on the same database."""

    def __init__(self, persona, url):
        self.client = httpx.Client(base_url=url, headers=dict(persona.client.headers), timeout=120)

    def write(self, llm, directory, name: str) -> dict:
        """The agent writes a Python file; the write's `metadata.diagnostics` (the file's key: it was checked)."""
        path = os.path.realpath(os.path.join(directory, name))
        sid = self.client.post("/session", params={"directory": str(directory)}, json={}).json()["id"]
        llm.script(Reply(tool_calls=[("write", {"filePath": path, "content": FIXED})]), Reply(text="done"))
        assert self.client.post(f"/session/{sid}/message", json=text_prompt("write")).status_code == 200
        part = next(p for m in self.client.get(f"/session/{sid}/message").json() for p in m["parts"]
                    if p["type"] == "tool")
        assert path in part["state"]["metadata"]["diagnostics"]
        return part["state"]["metadata"]["diagnostics"]

    def status(self, directory) -> list:
        return self.client.get("/lsp", params={"directory": str(directory)}).json()


def test_an_idle_server_is_stopped(alice, llm, server_factory):
    live = server_factory({"AGENTSERVER_LSP_IDLE_SECONDS": "2"})
    remote = Remote(alice, live.url)
    remote.write(llm, alice.repo, "idle.py")  # a server checked the file
    assert wait_for(lambda: not language_servers_of(live), timeout=30)
    assert remote.status(alice.repo) == []


def test_the_least_recently_used_server_goes_when_the_cap_is_reached(alice, llm, server_factory):
    live = server_factory({"AGENTSERVER_LSP_MAX_SERVERS": "1"})
    remote = Remote(alice, live.url)
    other = alice.root / "other"
    other.mkdir()
    remote.write(llm, alice.repo, "first.py")
    first = language_servers_of(live)
    remote.write(llm, other, "second.py")
    assert wait_for(lambda: not alive(first), timeout=30)
    assert remote.status(alice.repo) == []
    assert [s["id"] for s in remote.status(other)] == ["pyright"]
    assert len(language_servers_of(live)) == 1
