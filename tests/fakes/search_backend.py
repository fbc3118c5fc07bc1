"""A web search backend on 127.0.0.1 for the websearch tests: answers SearXNG's `GET /search?format=json` and
Exa's `POST /search` with fixed results, and records what it was asked."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

RESULTS = [{"title": "Django 5.2 released", "url": "https://example.org/django-52",
            "content": "Django 5.2 is a long-term support release."},
           {"title": "Python 3.11", "url": "https://example.org/py311", "content": "Faster CPython."}]


@pytest.fixture
def search_backend():
    """Answers SearXNG's GET /search?format=json and Exa's POST /search; records what it was asked."""
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _json(self, body) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            parts = urlsplit(self.path)
            seen.append({"method": "GET", "path": parts.path, "query": parse_qs(parts.query)})
            self._json({"query": parse_qs(parts.query).get("q", [""])[0], "results": RESULTS})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            seen.append({"method": "POST", "path": self.path, "body": body, "key": self.headers.get("x-api-key")})
            self._json({"results": [{"title": r["title"], "url": r["url"], "text": r["content"]} for r in RESULTS]})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.url = f"http://127.0.0.1:{httpd.server_port}"
    httpd.seen = seen
    yield httpd
    httpd.shutdown()
    httpd.server_close()
