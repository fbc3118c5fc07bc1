"""opencode 1.18's POST /mcp/{name}/connect|disconnect and /mcp/{name}/auth/authenticate."""
from tests.events.sse_client import open_stream
from tests.mcp.conftest import local_config
from tests.mcp.test_oauth import auth_server  # noqa: F401  (the local authorization server fixture)


def status(persona, name):
    return persona.get("/mcp", params={"directory": str(persona.repo)}).json().get(name)


def post(persona, path):
    return persona.post(path, params={"directory": str(persona.repo)})


def test_disconnect_and_connect_a_runtime_server(alice, add_server):
    add_server(alice)
    assert status(alice, "calc") == {"status": "connected"}
    response = post(alice, "/mcp/calc/disconnect")
    assert response.status_code == 200 and response.json() is True
    assert status(alice, "calc") == {"status": "disabled"}
    assert post(alice, "/mcp/calc/connect").json() is True
    assert status(alice, "calc") == {"status": "connected"}


def test_a_config_file_server_is_switched_by_an_override_the_file_keeps(alice):
    import json

    config = local_config()
    (alice.repo / "opencode.json").write_text(json.dumps({"mcp": {"filed": {
        "type": "local", "command": [config["command"], *config["arguments"]], "enabled": False}}}))
    assert status(alice, "filed") == {"status": "disabled"}
    assert post(alice, "/mcp/filed/connect").status_code == 200
    assert status(alice, "filed") == {"status": "connected"}
    assert '"enabled": false' in (alice.repo / "opencode.json").read_text()
    assert post(alice, "/mcp/filed/disconnect").status_code == 200
    assert status(alice, "filed") == {"status": "disabled"}


def test_unknown_and_other_users_servers_are_404(alice, bob, add_server):
    add_server(alice)
    for path in ("/mcp/nope/connect", "/mcp/nope/disconnect", "/mcp/nope/auth/authenticate"):
        assert post(alice, path).status_code == 404
    for path in ("/mcp/calc/connect", "/mcp/calc/disconnect", "/mcp/calc/auth/authenticate"):
        assert post(bob, path).status_code == 404
    assert status(alice, "calc") == {"status": "connected"}


def test_a_bad_name_is_400(alice):
    assert post(alice, "/mcp/" + "x" * 300 + "/connect").status_code == 400


def test_authenticate_starts_oauth_and_tells_the_client_where_to_go(alice, add_server, auth_server):  # noqa: F811
    add_server(alice, "remote", {"type": "remote", "url": auth_server.url + "/mcp"})
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        response = post(alice, "/mcp/remote/auth/authenticate")
        assert response.status_code == 200, response.text
        assert response.json() == {"status": "needs_auth"}
        frame, _ = stream.until(lambda d: d.get("payload", {}).get("type") == "mcp.browser.open.failed")
    properties = frame.data["payload"]["properties"]
    assert properties["mcpName"] == "remote"
    assert properties["url"].startswith(auth_server.url + "/authorize?")
    done = alice.post("/mcp/remote/auth/callback", params={"directory": str(alice.repo)}, json={"code": "c"})
    assert done.status_code == 200, done.text
    # Authenticated now: a second call reports the server's status and starts no new flow.
    registrations = len(auth_server.seen["register"])
    assert post(alice, "/mcp/remote/auth/authenticate").status_code == 200
    assert len(auth_server.seen["register"]) == registrations


def test_authenticate_refuses_servers_without_oauth(alice, add_server):
    add_server(alice)
    response = post(alice, "/mcp/calc/auth/authenticate")
    assert response.status_code == 409 and response.json()["name"] == "McpUnsupportedOAuthError"


def test_anonymous_callers_are_refused(anon):
    for path in ("/mcp/calc/connect", "/mcp/calc/disconnect", "/mcp/calc/auth/authenticate"):
        assert anon.post(path).status_code == 401


def test_a_server_that_never_speaks_mcp_fails_without_holding_the_request_for_its_timeout(alice, server_factory):
    """A local command that never answers (bash reading the protocol as commands) with a timeout of minutes:
    adding it and listing the servers answer with its failure once the wait's cap is up, instead of waiting
    the whole timeout (found by the contract test: POST /mcp and GET /mcp held for 258 s). A worker whose cap
    is 3 s instead of 20, so the test waits that long."""
    import time

    import httpx

    live = server_factory({"AGENTSERVER_MCP_CONNECT_WAIT_CAP_SECONDS": "3"})
    body = {"name": "silent", "config": {"type": "local", "command": ["/bin/bash"], "timeout": 258_556}}
    with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {alice.token}"}, timeout=60) as client:
        began = time.monotonic()
        added = client.post("/mcp", params={"directory": str(alice.repo)}, json=body)
        assert added.status_code == 200, added.text
        assert added.json()["silent"]["status"] == "failed"
        assert time.monotonic() - began < 15  # the worker's 3 s cap, not the default 20 s nor the 258 s timeout
        listed = client.get("/mcp", params={"directory": str(alice.repo)})
        assert listed.json()["silent"]["status"] == "failed"
