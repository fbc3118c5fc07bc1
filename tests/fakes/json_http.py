"""The base of the tests' small fake HTTP services (an identity provider, an OAuth server): quiet, JSON answers."""
import json
from http.server import BaseHTTPRequestHandler


class JsonRequestHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
