import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sessions_app.runtime.tools.base import ToolError
from tests.tools.harness import run_tool

PAGE = b"<html><head><title>t</title><script>var x=1</script></head><body><h1>Hello</h1><p>A <a href='/x'>link</a></p></body></html>"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_it_fetches_a_page_as_markdown_when_private_addresses_are_allowed(ws, site):
    result = await run_tool(ws, "webfetch", {"url": site + "/redirect", "format": "markdown"},
                            config={"webfetch": {"allow_private": True}})
    assert "# Hello" in result.output and "[link](/x)" in result.output
    assert "var x" not in result.output
    assert result.title.startswith(site + "/redirect (text/html")


async def test_it_fetches_text_and_html(ws, site):
    config = {"webfetch": {"allow_private": True}}
    text = await run_tool(ws, "webfetch", {"url": site, "format": "text"}, config=config)
    assert text.output == "Hello\n\nA link"
    html = await run_tool(ws, "webfetch", {"url": site, "format": "html"}, config=config)
    assert html.output == PAGE.decode()


async def test_it_refuses_loopback_addresses_by_default(ws, site):
    with pytest.raises(ToolError, match="private, loopback or link-local"):
        await run_tool(ws, "webfetch", {"url": site, "format": "text"})


async def test_it_refuses_other_schemes(ws):
    with pytest.raises(ToolError, match="URL must start with http:// or https://"):
        await run_tool(ws, "webfetch", {"url": "file:///etc/passwd", "format": "text"})
