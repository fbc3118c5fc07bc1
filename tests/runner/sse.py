"""Reads a `GET /event` SSE stream in a background thread into a list of event dicts."""
from __future__ import annotations

import json
import threading
import time

import httpx

from tests.conftest import TLS


class EventRecorder:
    def __init__(self, persona, directory, *, path: str = "/event"):
        self.events: list[dict] = []
        self.received: list[float] = []  # time.monotonic() at each event's arrival, beside self.events
        self._client = httpx.Client(base_url=persona.base_url, headers=persona.client.headers,
                                    timeout=httpx.Timeout(10, read=None), verify=TLS)
        self._params = {"directory": str(directory)}
        self._path = path
        self._connected = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._connected.wait(10), "SSE stream did not connect"

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self._path, params=self._params) as response:
                for line in response.iter_lines():
                    if self._stop:
                        return
                    if line.startswith("data: "):
                        event = json.loads(line[6:])
                        if event.get("type") == "server.connected":
                            self._connected.set()
                        self.received.append(time.monotonic())
                        self.events.append(event)
        except (httpx.HTTPError, RuntimeError):
            return

    def types(self, session_id: str | None = None) -> list[str]:
        return [e["type"] for e in self.of(session_id)]

    def of(self, session_id: str | None = None) -> list[dict]:
        out = []
        for event in list(self.events):
            if event.get("type") in ("server.connected", "server.heartbeat"):
                continue
            if session_id is not None and session_of(event) not in (session_id, None):
                continue
            out.append(event)
        return out

    def wait_for(self, predicate, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            events = list(self.events)
            for event in events[seen:]:
                if predicate(event):
                    return event
            seen = len(events)
            time.sleep(0.02)
        raise AssertionError(f"event never came; saw {[e.get('type') for e in self.events]}")

    def arrival(self, predicate) -> float | None:
        """When the first event matching `predicate` arrived (time.monotonic()), or None."""
        for event, at in zip(list(self.events), list(self.received)):
            if predicate(event):
                return at
        return None

    def close(self) -> None:
        self._stop = True
        self._client.close()


def session_of(event: dict) -> str | None:
    props = event.get("properties") or {}
    if "sessionID" in props:
        return props["sessionID"]
    for key in ("info", "part"):
        if isinstance(props.get(key), dict):
            return props[key].get("sessionID") or (props[key].get("id") if key == "info" else None)
    return None
