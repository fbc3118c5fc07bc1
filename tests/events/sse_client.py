"""A small SSE reader over httpx for the tests: frames exactly as sent, parsed events, server close."""
import json
import time
from dataclasses import dataclass

import httpx

from tests.conftest import TLS


@dataclass
class Frame:
    raw: bytes
    id: str | None
    data: dict


def parse_frame(raw: bytes) -> Frame:
    event_id, data = None, None
    for line in raw.decode().split("\n"):
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
    return Frame(raw=raw, id=event_id, data=data)


class SseStream:
    def __init__(self, base_url: str, path: str, *, headers: dict | None = None, params: dict | None = None,
                 read_timeout: float = 15.0):
        self.client = httpx.Client(base_url=base_url, timeout=httpx.Timeout(10, read=read_timeout), verify=TLS)
        self._context = self.client.stream("GET", path, headers=headers or {}, params=params)
        self.response = self._context.__enter__()
        self._chunks = self.response.iter_raw() if self.response.status_code == 200 else iter(())
        self._buffer = b""
        self.ended = False

    @property
    def status_code(self) -> int:
        return self.response.status_code

    def json(self):
        self.response.read()
        return self.response.json()

    def next_raw(self) -> bytes | None:
        """The next whole frame including its blank line, or None once the server closed the stream."""
        while b"\n\n" not in self._buffer:
            try:
                chunk = next(self._chunks)
            except (StopIteration, httpx.RemoteProtocolError):
                self.ended = True
                return None
            self._buffer += chunk
        frame, _, self._buffer = self._buffer.partition(b"\n\n")
        return frame + b"\n\n"

    def next(self) -> Frame | None:
        raw = self.next_raw()
        return parse_frame(raw) if raw is not None else None

    def until(self, predicate, *, limit: int = 1000) -> tuple[Frame, list[Frame]]:
        """Read until a frame matches; returns it and every frame read before it."""
        seen = []
        for _ in range(limit):
            frame = self.next()
            assert frame is not None, f"stream closed before the expected event; saw {[f.data for f in seen]}"
            if predicate(frame.data):
                return frame, seen
            seen.append(frame)
        raise AssertionError("expected event never came")

    def read_to_end(self, deadline_seconds: float = 20.0) -> list[Frame]:
        frames, deadline = [], time.monotonic() + deadline_seconds
        while time.monotonic() < deadline:
            frame = self.next()
            if frame is None:
                return frames
            frames.append(frame)
        raise AssertionError("stream stayed open")

    def close(self) -> None:
        try:
            self._context.__exit__(None, None, None)
        finally:
            self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_stream(persona, path: str, *, base_url: str | None = None, **kw) -> SseStream:
    headers = {"Authorization": f"Bearer {persona.token}", **kw.pop("headers", {})}
    return SseStream(base_url or persona.base_url, path, headers=headers, **kw)


def payload_type(shape: str):
    """The event type of a parsed frame, whatever the stream shape."""
    def get(data: dict) -> str:
        return data["payload"]["type"] if shape == "global" else data["type"]
    return get
