"""Helpers for the PTY tests: create terminals over HTTP, talk to them over a real WebSocket."""
import asyncio
import json
import os
import time

import pytest
from websockets.asyncio.client import connect

from tests.conftest import TLS


def ws_url(persona_or_url, pty_id: str, *, cursor: int | None = None, v2: bool = False, query: str = "") -> str:
    base = persona_or_url if isinstance(persona_or_url, str) else persona_or_url.base_url
    url = base.replace("http://", "ws://") + ("/api" if v2 else "") + f"/pty/{pty_id}/connect"
    params = [p for p in (f"cursor={cursor}" if cursor is not None else "", query) if p]
    return url + ("?" + "&".join(params) if params else "")


def open_socket(persona, pty_id: str, *, base_url: str | None = None, **kw):
    return connect(ws_url(base_url or persona.base_url, pty_id, **kw),
                   additional_headers={"Authorization": f"Bearer {persona.token}"}, max_size=None)


class Screen:
    """Collects what a socket receives: text output, the cursor control frame, the close code."""

    def __init__(self, ws):
        self.ws = ws
        self.text = ""
        self.cursors: list[int] = []
        self.closed_code: int | None = None

    async def _one(self, timeout: float) -> bool:
        try:
            frame = await asyncio.wait_for(self.ws.recv(), timeout)
        except asyncio.TimeoutError:
            return False
        except Exception:  # noqa: BLE001  (ConnectionClosed: record the code)
            self.closed_code = self.ws.close_code
            return False
        if isinstance(frame, bytes):
            assert frame[:1] == b"\x00", frame
            self.cursors.append(json.loads(frame[1:])["cursor"])
        else:
            self.text += frame
        return True

    async def until(self, predicate, timeout: float = 15) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.closed_code is not None:
                return predicate(self)
            await self._one(remaining)
        return True

    async def expect(self, needle: str, timeout: float = 15) -> str:
        assert await self.until(lambda s: needle in s.text, timeout), f"{needle!r} not in {self.text[-2000:]!r}"
        return self.text

    async def closed(self, timeout: float = 15) -> int | None:
        await self.until(lambda s: s.closed_code is not None, timeout)
        return self.closed_code


def create_pty(persona, **body) -> dict:
    response = persona.post("/pty", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def shell_body(**extra) -> dict:
    """A quiet, predictable interactive shell."""
    body = {"command": "/bin/sh", "args": [], "env": {"PS1": "$ ", "ENV": ""}}
    body.update(extra)
    return body


def wait_for(predicate, timeout: float = 15, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


@pytest.fixture
def cleanup_ptys(alice):
    yield
    for pty in alice.get("/pty").json():
        alice.delete(f"/pty/{pty['id']}")


class EventLog:
    """Reads the caller's /global/event stream in a thread and keeps the payloads."""

    def __init__(self, persona):
        import threading

        import httpx

        self.payloads: list[dict] = []
        self.directories: dict[str, str] = {}
        self._client = httpx.Client(base_url=persona.base_url, timeout=httpx.Timeout(5, read=None),
                                    headers={"Authorization": f"Bearer {persona.token}"}, verify=TLS)
        self._connected = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._connected.wait(10), "event stream did not open"

    def _run(self):
        try:
            with self._client.stream("GET", "/global/event") as response:
                for line in response.iter_lines():
                    if self._stop:
                        return
                    if line.startswith("data: "):
                        item = json.loads(line[6:])
                        payload = item.get("payload", {})
                        self.directories[payload.get("type", "") + ":" + json.dumps(payload.get("properties"))] = \
                            item.get("directory")
                        if payload.get("type") == "server.connected":
                            self._connected.set()
                        self.payloads.append(payload)
        except Exception:  # noqa: BLE001  (closed at teardown)
            pass

    def of(self, pty_id: str) -> list[tuple[str, dict]]:
        out = []
        for payload in list(self.payloads):
            props = payload.get("properties", {})
            if payload.get("type", "").startswith("pty.") and (props.get("id") == pty_id
                                                              or props.get("info", {}).get("id") == pty_id):
                out.append((payload["type"], props))
        return out

    def directory_of(self, kind: str, properties: dict) -> str | None:
        return self.directories.get(kind + ":" + json.dumps(properties))

    def close(self):
        self._stop = True
        self._client.close()


@pytest.fixture
def alice_events(alice):
    log = EventLog(alice)
    yield log
    log.close()
