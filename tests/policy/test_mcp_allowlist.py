"""MCP servers under a restricting policy: adding one not on the allowlist is refused naming the policy; one
on it is added; a server added before the policy changed, or one a config file names, fails with the policy
named and cannot be switched on."""
import json

from tests.mcp.conftest import FAKE_SERVER, api, local_config
from tests.policy.conftest import refusal


def test_adding_a_server_not_on_the_allowlist_is_refused(alice, set_policy):
    set_policy(group="contractors", members=[alice], restrict_mcp=True, mcp_local_commands=["uvx mcp-server-git"])
    data = refusal(api(alice, "POST", "/mcp/server", json={"name": "calc", "config": local_config()}))
    assert data["policy"] == "policy of group 'contractors'" and data["field"] == "mcp"
    remote = {"type": "remote", "url": "https://mcp.example.com/sse"}
    refusal(api(alice, "POST", "/mcp/server", json={"name": "far", "config": remote}))
    assert api(alice, "GET", "/mcp/server").json() == []


def test_a_server_on_the_allowlist_is_added_and_connects(alice, set_policy):
    config = local_config()
    set_policy(restrict_mcp=True, mcp_local_commands=[f"{config['command']} {FAKE_SERVER}"])
    answer = api(alice, "POST", "/mcp/server", json={"name": "calc", "config": config})
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "connected"


def test_servers_from_before_the_policy_and_from_config_files_fail_naming_it(alice, set_policy):
    assert api(alice, "POST", "/mcp/server", json={"name": "calc", "config": local_config()}).status_code == 200
    (alice.repo / "opencode.json").write_text(json.dumps({"mcp": {
        "fromfile": {"type": "local", "command": [local_config()["command"], FAKE_SERVER]}}}))
    set_policy(restrict_mcp=True)
    statuses = alice.get("/mcp", params={"directory": str(alice.repo)}).json()
    for name in ("calc", "fromfile"):
        assert statuses[name]["status"] == "failed"
        assert "policy of everyone" in statuses[name]["error"]
    data = refusal(alice.post("/mcp/calc/connect", params={"directory": str(alice.repo)}))
    assert data["server"] == "calc"
    refusal(alice.post("/mcp/fromfile/connect", params={"directory": str(alice.repo)}))
