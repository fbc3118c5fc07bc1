"""A scripted LLM provider: a real HTTP server on 127.0.0.1 speaking OpenAI chat-completions
(`POST /v1/chat/completions`) and Anthropic messages (`POST /v1/messages`), streaming or not.

Tests queue replies FIFO with `fake.script(Reply(...), ...)`; when the queue is empty the default reply is
used. Requests whose system prompt contains "title generator" (the session-title call) get TITLE_TEXT without
consuming the queue, unless `consume_title_requests` is set. Every request is recorded in `fake.requests`."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_TEXT = "Hello from the fake LLM."
TITLE_TEXT = "Fake session title"


@dataclass
class Reply:
    text: str | None = None
    chunks: int | None = None                 # split `text` into N deltas (default: one per word)
    reasoning: str | None = None              # streamed before the text (reasoning_content / thinking block)
    tool_calls: list = field(default_factory=list)  # [(name, {args}), ...]
    error_status: int | None = None           # answer with this HTTP status and an error body instead
    error_message: str = "fake failure"
    error_headers: dict = field(default_factory=dict)
    delay: float = 0.0                        # seconds before each delta
    break_after: int | None = None            # drop the connection after N deltas (no finish, no usage)
    finish: str | None = None                 # override the finish/stop reason (e.g. "length")
    # None: the provider reports no usage (OpenAI protocol: no usage chunk)
    usage: dict | None = field(default_factory=lambda: {"input": 100, "output": 20, "reasoning": 0,
                                                        "cache_read": 0, "cache_write": 0})

    def text_deltas(self, text: str | None = None) -> list[str]:
        return split(self.text if text is None else text, self.chunks)

    def reasoning_deltas(self) -> list[str]:
        return split(self.reasoning, None) if self.reasoning else []


def split(text: str | None, chunks: int | None) -> list[str]:
    if not text:
        return []
    if chunks:
        size = -(-len(text) // chunks)
        return [text[i:i + size] for i in range(0, len(text), size)]
    words = text.split(" ")
    return [words[0]] + [" " + w for w in words[1:]]


@dataclass
class RecordedRequest:
    protocol: str        # "openai" | "anthropic"
    path: str
    headers: dict
    body: dict

    @property
    def system_text(self) -> str:
        if self.protocol == "anthropic":
            system = self.body.get("system") or ""
            return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system)
        return "\n".join(_text_of(m.get("content")) for m in self.body.get("messages", [])
                         if m.get("role") in ("system", "developer"))

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


class FakeLLM:
    def __init__(self, port: int = 0):
        self.default = Reply(text=DEFAULT_TEXT)
        self.consume_title_requests = False
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self._titles_open = threading.Event()
        self._titles_open.set()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-llm", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """What goes into a provider's `options.baseURL` (both protocols, AI-SDK style with /v1)."""
        return f"{self.url}/v1"

    def script(self, *replies: Reply) -> FakeLLM:
        with self._lock:
            self._queue.extend(replies)
        return self

    def hold(self) -> None:
        """Keep every request waiting (recorded, unanswered) until `release()`: calls in flight at once."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def hold_titles(self) -> None:
        """Keep title requests waiting (recorded, unanswered) until `release_titles()`; the others are answered."""
        self._titles_open.clear()

    def release_titles(self) -> None:
        self._titles_open.set()

    def reset(self) -> None:
        self._open.set()
        self._titles_open.set()
        with self._lock:
            self._queue.clear()
            self.requests.clear()
        self.default = Reply(text=DEFAULT_TEXT)
        self.consume_title_requests = False

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if "title generator" in request.system_text.lower() and not self.consume_title_requests:
                return Reply(text=TITLE_TEXT)
            return self._queue.pop(0) if self._queue else self.default


def _handler_for(fake: FakeLLM):
    from tests.fakes import llm_wire

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            path = self.path.split("?")[0].rstrip("/")
            if path.endswith("/models"):
                return llm_wire.send_json(self, 200, {"object": "list", "data": [
                    {"id": "fake-model", "object": "model", "created": 1700000000, "owned_by": "fake"}]})
            return llm_wire.send_json(self, 404, {"error": {"message": "not found"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return llm_wire.send_json(self, 400, {"error": {"message": "invalid json"}})
            path = self.path.split("?")[0].rstrip("/")
            if path.endswith("/chat/completions"):
                protocol = "openai"
            elif path.endswith("/messages"):
                protocol = "anthropic"
            else:
                return llm_wire.send_json(self, 404, {"error": {"message": f"no route {path}"}})
            request = RecordedRequest(protocol, path, {k.lower(): v for k, v in self.headers.items()}, body)
            reply = fake._next_reply(request)
            fake._open.wait()
            if "title generator" in request.system_text.lower():
                fake._titles_open.wait()
            try:
                if reply.error_status:
                    return llm_wire.send_error(self, protocol, reply)
                if protocol == "openai":
                    llm_wire.openai_reply(self, body, reply)
                else:
                    llm_wire.anthropic_reply(self, body, reply)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (cancelled): nothing to do

    return Handler


def pause(seconds: float) -> None:
    if seconds:
        time.sleep(seconds)
