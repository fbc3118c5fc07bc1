"""Remote MCP servers over streamable HTTP and SSE: the same test server, reached by URL with headers."""
import socket
import subprocess
import sys
import time

import pytest

from tests.mcp.conftest import FAKE_SERVER, api


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def remote_server():
    started = []

    def start(kind: str) -> str:
        port = free_port()
        process = subprocess.Popen([sys.executable, FAKE_SERVER, f"--{kind}", str(port)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        path = "/mcp" if kind == "http" else "/sse"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        return f"http://127.0.0.1:{port}{path}"
    yield start
    for process in started:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("kind", ["http", "sse"])
def test_a_remote_server_connects_and_serves_prompts(alice, add_server, remote_server, kind):
    url = remote_server(kind)
    created = add_server(alice, "far", {"type": "remote", "url": url, "headers": {"X-Test": "1"}, "oauth": False})
    assert created["status"] == "connected", created
    assert created["tools"] == 3 and created["auth"] == "none"
    rendered = api(alice, "POST", "/mcp/prompt/render",
                   json={"server": "far", "name": "greet", "arguments": {"name": "Ann"}}).json()
    assert rendered["text"] == "Please greet Ann warmly."


def test_an_unreachable_remote_server_is_failed(alice, add_server):
    created = add_server(alice, "gone", {"type": "remote", "url": "http://127.0.0.1:9/mcp", "oauth": False})
    assert created["status"] == "failed" and created["error"]
