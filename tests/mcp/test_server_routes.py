"""mcp.server.create / mcp.server.list and the original GET /mcp status map, against a real MCP server."""
from tests.mcp.conftest import api, local_config


def test_a_created_local_server_connects_and_lists_its_tools(alice, add_server):
    created = add_server(alice)
    assert created["name"] == "calc" and created["type"] == "local"
    assert created["status"] == "connected" and created["tools"] == 3
    listed = api(alice, "GET", "/mcp/server").json()
    assert [(s["name"], s["status"], s["tools"], s["auth"]) for s in listed] == [("calc", "connected", 3, "none")]


def test_the_original_status_map_has_each_server(alice, add_server):
    assert alice.get("/mcp", params={"directory": str(alice.repo)}).json() == {}
    add_server(alice)
    assert alice.get("/mcp", params={"directory": str(alice.repo)}).json() == {"calc": {"status": "connected"}}


def test_the_config_file_spelling_and_the_config_map_are_accepted(alice, add_server):
    from projects_app.models import UserConfig

    config = local_config()
    UserConfig.objects.update_or_create(user=alice.user, defaults={"data": {"mcp": {
        "fromconfig": {"type": "local", "command": [config["command"], *config["arguments"]]},
        "off": {"type": "local", "command": ["nothing"], "enabled": False},
        "invalid": {"type": "local", "command": "x", "typo": 1},
    }}})
    statuses = alice.get("/mcp", params={"directory": str(alice.repo)}).json()
    assert statuses["fromconfig"] == {"status": "connected"} and statuses["off"] == {"status": "disabled"}
    assert statuses["invalid"]["status"] == "failed" and "typo" in statuses["invalid"]["error"]


def test_a_failing_command_is_a_failed_status_not_an_error(alice, add_server):
    created = add_server(alice, "broken", {"type": "local", "command": "/nonexistent/mcp-server"})
    assert created["status"] == "failed" and created["error"]
    exits = add_server(alice, "exits", {"type": "local", "command": "false"})
    assert exits["status"] == "failed"
    statuses = alice.get("/mcp", params={"directory": str(alice.repo)}).json()
    assert statuses["broken"]["status"] == "failed" and statuses["exits"]["status"] == "failed"


def test_a_disabled_server_is_not_started(alice, add_server):
    created = add_server(alice, "calc", local_config(enabled=False))
    assert created["status"] == "disabled"


def test_malformed_configs_are_400(alice):
    bad = [
        {"type": "local"},
        {"type": "local", "command": ""},
        {"type": "local", "command": 5},
        {"type": "local", "command": "x", "arguments": "y"},
        {"type": "local", "command": ["x"], "arguments": ["y"]},
        {"type": "local", "command": "x", "environment": {"A": 1}},
        {"type": "local", "command": "x", "unknown": True},
        {"type": "remote"},
        {"type": "remote", "url": "ftp://example.com"},
        {"type": "remote", "url": "http://x", "oauth": "yes"},
        {"type": "remote", "url": "http://x", "oauth": {"clientId": 5}},
        {"type": "remote", "url": "http://x", "timeout": 0},
        {"type": "remote", "url": "http://x", "timeout": 7.5},
        {"type": "remote", "url": "http://x", "timeout": True},
        {"type": "remote", "url": "http://x", "oauth": {"callbackPort": 80.5}},
        {"type": "other"},
        "local",
        None,
    ]
    for config in bad:
        response = api(alice, "POST", "/mcp/server", json={"name": "x", "config": config})
        assert response.status_code == 400, (config, response.text)
        assert response.json()["name"] == "BadRequestError"
    for name in ("", "a/b", "x" * 200, 5):
        response = api(alice, "POST", "/mcp/server", json={"name": name, "config": local_config()})
        assert response.status_code == 400, (name, response.text)
    assert api(alice, "POST", "/mcp/server", json={"config": local_config()}).status_code == 400
    assert api(alice, "GET", "/mcp/server").json() == []


def test_bob_does_not_see_alices_servers(alice, bob, add_server):
    add_server(alice)
    assert api(bob, "GET", "/mcp/server").json() == []
    assert bob.get("/mcp", params={"directory": str(bob.repo)}).json() == {}
    assert api(bob, "POST", "/mcp/prompt/render", json={"server": "calc", "name": "greet"}).status_code == 404
    assert api(bob, "GET", "/mcp/resource/read", params={"server": "calc", "uri": "test://notes"}).status_code == 404
    assert api(bob, "POST", "/mcp/server/calc/oauth").status_code == 404


def test_anonymous_callers_are_refused(anon):
    for method, path in (("GET", "/api/mcp/server"), ("POST", "/api/mcp/server"), ("GET", "/mcp"),
                         ("GET", "/api/mcp/prompt"), ("GET", "/api/mcp/resource"),
                         ("POST", "/api/mcp/server/x/oauth")):
        assert anon.request(method, path).status_code == 401


def test_a_cwd_outside_the_roots_is_a_failed_status(alice, add_server):
    created = add_server(alice, "escape", local_config(cwd="/etc"))
    assert created["status"] == "failed" and "cwd" in created["error"]
    (alice.repo / "sub").mkdir()
    inside = add_server(alice, "inside", local_config(cwd="sub"))
    assert inside["status"] == "connected"


def test_the_original_add_route_returns_the_status_map(alice):
    response = alice.post("/mcp", params={"directory": str(alice.repo)},
                          json={"name": "calc", "config": local_config()})
    assert response.status_code == 200 and response.json() == {"calc": {"status": "connected"}}
    bad = alice.post("/mcp", params={"directory": str(alice.repo)}, json={"name": "x", "config": {"type": "x"}})
    assert bad.status_code == 400


def test_a_whole_number_written_with_a_fraction_is_an_integer(alice):
    """JSON Schema's integer is the mathematical value: 5000.0 is the timeout 5000, stored as an int."""
    config = {"type": "remote", "url": "http://127.0.0.1:9/mcp", "timeout": 5000.0,
              "oauth": {"callbackPort": 19876.0}}
    response = api(alice, "POST", "/mcp/server", json={"name": "whole", "config": config})
    assert response.status_code == 200, response.text
    from providers_app.mcp import configs
    clean = configs.normalize(config)
    assert clean["timeout"] == 5000 and type(clean["timeout"]) is int
    assert clean["oauth"] == {"callbackPort": 19876} and type(clean["oauth"]["callbackPort"]) is int
