"""The sandbox's modes and limits: a fork bomb and a memory hog in bob's PTY leave the server answering;
AGENTSERVER_SANDBOX=off behaves as before and health says so; a missing bubblewrap is a clear 503, not a 500."""
import os

import httpx
import pytest

from tests.pty.conftest import Screen, open_socket
from tests.runner.conftest import wait_until
from tests.sandbox.conftest import is_resident

LIMITED_UID_BASE = 400000  # apart from the shared server's users (several test workers share uids there)


def _client(persona, live) -> httpx.Client:
    return httpx.Client(base_url=live.url, headers=dict(persona.client.headers), timeout=30)


def _processes_of(uid: int) -> list[int]:
    """The uid's processes, but for its resident sandbox (the one that runs git for it: not the terminal's)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid and not is_resident(int(entry)):
                    found.append(int(entry))
            except FileNotFoundError:
                pass
    return found


@pytest.fixture(scope="module")
def limited_server(server_factory):
    return server_factory({"AGENTSERVER_SANDBOX_PROCESSES": "64", "AGENTSERVER_SANDBOX_MEMORY_MB": "512",
                           "AGENTSERVER_SANDBOX_UID_BASE": str(LIMITED_UID_BASE)})


async def test_a_fork_bomb_and_a_memory_hog_leave_the_server_answering(bob, limited_server):
    client = _client(bob, limited_server)
    try:
        script = ("/usr/bin/python3 -c 'bytearray(4 * 1024 ** 3)' 2>&1 | tail -1; echo HOG-DONE; "
                  "bomb() { bomb | bomb & }; bomb; sleep 60")
        response = client.post("/pty", params={"directory": str(bob.repo)},
                               json={"command": "/bin/bash", "args": ["-c", script]})
        assert response.status_code == 200, response.text
        pty = response.json()
        async with open_socket(bob, pty["id"], base_url=limited_server.url, cursor=0) as ws:
            text = await Screen(ws).expect("HOG-DONE")
        assert "MemoryError" in text
        for _ in range(5):
            health = httpx.get(f"{limited_server.url}/global/health", timeout=1)
            assert health.status_code == 200 and health.json()["healthy"] is True
        assert client.delete(f"/pty/{pty['id']}").status_code == 200
        if os.geteuid() == 0:  # removing the terminal kills the whole sandbox, every forked copy included
            wait_until(lambda: not _processes_of(LIMITED_UID_BASE + bob.user.pk), timeout=20)
    finally:
        client.close()


def test_health_reports_the_sandbox(anon):
    sandbox = anon.get("/global/health").json()["sandbox"]
    assert sandbox["mode"] == "bwrap"
    assert sandbox["network"] in ("outbound", "none")


def test_sandbox_off_behaves_as_before_and_health_says_so(alice, fake_llm, server_factory):
    from tests.fakes.fixtures import configure_fake_provider

    live = server_factory({"AGENTSERVER_SANDBOX": "off"})
    client = _client(alice, live)
    try:
        assert httpx.get(f"{live.url}/global/health").json()["sandbox"] == {"mode": "off"}
        configure_fake_provider(alice, fake_llm)
        session = client.post("/session", params={"directory": str(alice.repo)}, json={}).json()
        response = client.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "echo $HOME; id -u"})
        assert response.status_code == 200, response.text
        output = response.json()["parts"][0]["state"]["output"].split()
        assert output == [str(alice.root), str(os.geteuid())]  # today's behaviour: HOME is the first root
        assert "SANDBOX OFF" in live.log()
    finally:
        client.close()


def test_a_missing_bubblewrap_is_a_clear_error(alice, fake_llm, server_factory):
    from tests.fakes.fixtures import configure_fake_provider

    live = server_factory({"AGENTSERVER_SANDBOX_BWRAP": "/nonexistent/bwrap"})
    client = _client(alice, live)
    try:
        sandbox = httpx.get(f"{live.url}/global/health").json()["sandbox"]
        assert sandbox["mode"] == "unavailable" and "bubblewrap" in sandbox["reason"]
        response = client.post("/pty", params={"directory": str(alice.repo)}, json={"command": "/bin/sh"})
        assert response.status_code == 503, response.text
        assert response.json()["name"] == "SandboxUnavailableError"
        assert "bubblewrap" in response.json()["data"]["message"]
        assert client.get("/pty").json() == []
        configure_fake_provider(alice, fake_llm)
        session = client.post("/session", params={"directory": str(alice.repo)}, json={}).json()
        shell = client.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "true"})
        assert shell.status_code == 503 and shell.json()["name"] == "SandboxUnavailableError"
        assert client.get(f"/session/{session['id']}/message").json() == []  # nothing half-recorded
        assert "sandbox unavailable" in live.log()
    finally:
        client.close()
