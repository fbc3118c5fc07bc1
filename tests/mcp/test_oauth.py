"""OAuth for remote MCP servers: discovery (RFC 8414) against a local authorization server, dynamic client
registration, PKCE, the code exchange, tokens stored encrypted as the `mcp:<name>` auth account."""
import base64
import hashlib
import json
import threading
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from tests.fakes.json_http import JsonRequestHandler
from tests.mcp.conftest import api, local_config

ACCESS = "mcp-access-token-0123456789abcdef"


@pytest.fixture
def auth_server():
    seen: dict = {"token": [], "register": [], "mcp_auth": []}

    class Handler(JsonRequestHandler):
        def do_GET(self):
            if self.path == "/.well-known/oauth-authorization-server":
                base = f"http://127.0.0.1:{self.server.server_port}"
                return self._json(200, {"issuer": base, "authorization_endpoint": base + "/authorize",
                                        "token_endpoint": base + "/token", "registration_endpoint": base + "/register",
                                        "response_types_supported": ["code"],
                                        "code_challenge_methods_supported": ["S256"]})
            if self.path.startswith("/mcp"):
                seen["mcp_auth"].append(self.headers.get("Authorization"))
                return self._json(401, {"error": "unauthorized"})
            return self._json(404, {"error": "not found"})

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            if self.path == "/register":
                seen["register"].append(json.loads(body))
                return self._json(201, {"client_id": "dynamic-client"})
            if self.path == "/token":
                seen["token"].append({k: v[0] for k, v in parse_qs(body).items()})
                return self._json(200, {"access_token": ACCESS, "refresh_token": "refresh-0123456789abcdef",
                                        "expires_in": 3600, "token_type": "Bearer"})
            if self.path.startswith("/mcp"):
                seen["mcp_auth"].append(self.headers.get("Authorization"))
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            return self._json(404, {"error": "not found"})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.seen = seen
    httpd.url = f"http://127.0.0.1:{httpd.server_port}"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_start_returns_an_authorization_url_and_the_callback_stores_the_tokens(alice, add_server, auth_server):
    created = add_server(alice, "remote", {"type": "remote", "url": auth_server.url + "/mcp"})
    assert created["status"] == "needs_auth" and created["auth"] == "unauthenticated"

    started = api(alice, "POST", "/mcp/server/remote/oauth")
    assert started.status_code == 200, started.text
    url = urlparse(started.json()["authorizationUrl"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == auth_server.url + "/authorize"
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert query["client_id"] == "dynamic-client" and query["response_type"] == "code"
    assert query["code_challenge_method"] == "S256" and query["state"] == started.json()["oauthState"]
    assert auth_server.seen["register"][0]["redirect_uris"] == [query["redirect_uri"]]

    done = api(alice, "POST", "/mcp/server/remote/oauth/callback", json={"code": "the-code"})
    assert done.status_code == 200, done.text
    token_request = auth_server.seen["token"][0]
    assert token_request["code"] == "the-code" and token_request["grant_type"] == "authorization_code"
    challenge = base64.urlsafe_b64encode(hashlib.sha256(token_request["code_verifier"].encode()).digest())
    assert challenge.rstrip(b"=").decode() == query["code_challenge"]

    from auth_app.models import AuthAccount

    account = AuthAccount.objects.get(owner=alice.user, service_id="mcp:remote")
    assert account.active and ACCESS not in account.ciphertext
    listed = api(alice, "GET", "/mcp/server").json()
    assert listed[0]["auth"] == "authenticated"
    assert f"Bearer {ACCESS}" in auth_server.seen["mcp_auth"]
    assert ACCESS not in json.dumps(listed) and ACCESS not in done.text

    removed = api(alice, "DELETE", "/mcp/server/remote/oauth")
    assert removed.json() == {"success": True}
    assert not AuthAccount.objects.filter(owner=alice.user, service_id="mcp:remote").exists()
    assert api(alice, "GET", "/mcp/server").json()[0]["auth"] == "unauthenticated"


def test_servers_without_oauth_are_409_and_unknown_ones_404(alice, add_server, auth_server):
    add_server(alice, "calc", local_config())
    add_server(alice, "plain", {"type": "remote", "url": auth_server.url + "/mcp", "oauth": False})
    for name in ("calc", "plain"):
        response = api(alice, "POST", f"/mcp/server/{name}/oauth")
        assert response.status_code == 409 and response.json()["name"] == "ConflictError"
    assert api(alice, "POST", "/mcp/server/nope/oauth").status_code == 404
    assert api(alice, "DELETE", "/mcp/server/nope/oauth").status_code == 404
    assert api(alice, "POST", "/mcp/server/nope/oauth/callback", json={"code": "x"}).status_code == 404


def test_a_callback_without_a_started_flow_is_409_and_without_a_code_400(alice, add_server, auth_server):
    add_server(alice, "remote", {"type": "remote", "url": auth_server.url + "/mcp"})
    assert api(alice, "POST", "/mcp/server/remote/oauth/callback", json={"code": "x"}).status_code == 409
    assert api(alice, "POST", "/mcp/server/remote/oauth/callback", json={}).status_code == 400


def test_a_server_without_metadata_is_409(alice, add_server):
    add_server(alice, "nowhere", {"type": "remote", "url": "http://127.0.0.1:9/mcp"})
    response = api(alice, "POST", "/mcp/server/nowhere/oauth")
    assert response.status_code == 409


@pytest.mark.parametrize("url", ["http://[::1/mcp", "http://xn--zz.com/mcp", "http://" + "a" * 70 + ".com/mcp"])
def test_a_server_whose_url_cannot_be_sent_to_is_409_on_every_start(alice, add_server, url):
    """An unclosed IPv6 bracket, a host IDNA refuses, a label past 63 characters: httpx raises outside its
    HTTPError for these (found by the contract test as a 500 on POST /mcp/{name}/auth/authenticate)."""
    add_server(alice, "odd", {"type": "remote", "url": url})
    params = {"directory": str(alice.repo)}
    for started in (api(alice, "POST", "/mcp/server/odd/oauth"), alice.post("/mcp/odd/auth", params=params),
                    alice.post("/mcp/odd/auth/authenticate", params=params)):
        assert started.status_code == 409, started.text
        assert started.json()["name"] == "ConflictError"


def test_the_original_auth_routes_use_the_same_flow(alice, add_server, auth_server):
    add_server(alice, "remote", {"type": "remote", "url": auth_server.url + "/mcp"})
    params = {"directory": str(alice.repo)}
    started = alice.post("/mcp/remote/auth", params=params).json()
    assert started["authorizationUrl"].startswith(auth_server.url + "/authorize?")
    done = alice.post("/mcp/remote/auth/callback", params=params, json={"code": "c"})
    assert done.status_code == 200 and done.json()["status"] in ("failed", "needs_auth", "connected")
    assert alice.delete("/mcp/remote/auth", params=params).json() == {"success": True}
    assert alice.post("/mcp/nope/auth", params=params).status_code == 404
