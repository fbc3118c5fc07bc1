"""MCP prompts in the command list (source "mcp"); mcp.tools.changed when a server is added."""
from tests.mcp.conftest import api
from tests.runner.sse import EventRecorder


def test_mcp_prompts_appear_as_commands(alice, add_server):
    add_server(alice)
    commands = alice.get("/command", params={"directory": str(alice.repo)}).json()
    mcp = [c for c in commands if c.get("source") == "mcp"]
    assert [c["name"] for c in mcp] == ["calc:greet"]
    assert mcp[0]["description"] == "Greet someone by name." and mcp[0]["hints"] == ["$1"]
    assert "$1" in mcp[0]["template"]


def test_adding_a_server_publishes_mcp_tools_changed(alice, add_server):
    recorder = EventRecorder(alice, alice.repo)
    try:
        add_server(alice)
        event = recorder.wait_for(lambda e: e.get("type") == "mcp.tools.changed")
        assert event["properties"] == {"server": "calc"}
    finally:
        recorder.close()


def test_bob_does_not_get_alices_mcp_events_or_commands(alice, bob, add_server):
    recorder = EventRecorder(bob, bob.repo)
    try:
        add_server(alice)
        commands = bob.get("/command", params={"directory": str(bob.repo)}).json()
        assert not [c for c in commands if c.get("source") == "mcp"]
        assert "mcp.tools.changed" not in recorder.types()
    finally:
        recorder.close()
    assert api(bob, "GET", "/mcp/prompt").json() == []
