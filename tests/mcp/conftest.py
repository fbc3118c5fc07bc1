import sys
from pathlib import Path

import pytest

FAKE_SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


def local_config(**extra) -> dict:
    """The test MCP server (tests/fakes/mcp_server.py) in the v2 spelling: command + arguments."""
    return {"type": "local", "command": sys.executable, "arguments": [FAKE_SERVER], **extra}


def api(persona, method: str, path: str, **kwargs):
    params = {"directory": str(persona.repo), **kwargs.pop("params", {})}
    return persona.client.request(method, f"/api{path}", params=params, **kwargs)


@pytest.fixture
def add_server():
    def add(persona, name: str = "calc", config: dict | None = None):
        response = api(persona, "POST", "/mcp/server", json={"name": name, "config": config or local_config()})
        assert response.status_code == 200, response.text
        return response.json()
    return add
