"""Terminals opened and closed, MCP servers added, connected, disconnected and authorized, worktrees created
and removed: each leaves one audit record naming the person who did it, and never an environment's values."""
import sys

from tests.audit.helpers import actions_after, details, last_id, records_after
from tests.mcp.test_oauth import auth_server  # noqa: F401  (the local authorization server fixture)
from tests.mcp.conftest import FAKE_SERVER

SECRET = "sk-audit-ENV-SECRET-1234567890"


def test_a_terminal_opened_and_removed_leaves_two_records(alice):
    mark = last_id()
    created = alice.post("/pty", json={"command": "/bin/sh", "args": [], "env": {"PS1": "$ ", "TOKEN": SECRET}})
    assert created.status_code == 200, created.text
    pty_id = created.json()["id"]
    assert alice.delete(f"/pty/{pty_id}").status_code == 200
    rows = records_after(mark, object_type="pty")
    assert [(row.action, row.object_id, row.actor_person) for row in rows] == [
        ("pty.opened", pty_id, alice.user.pk), ("pty.closed", pty_id, alice.user.pk)]
    assert details(rows[0])["command"] == "/bin/sh" and details(rows[1])["reason"] == "removed"
    assert SECRET not in rows[0].details + rows[1].details


def test_an_mcp_server_added_disconnected_and_connected_is_recorded_without_its_secrets(alice):
    mark = last_id()
    config = {"type": "local", "command": [sys.executable, FAKE_SERVER], "environment": {"API_KEY": SECRET}}
    response = alice.client.post("/api/mcp/server", params={"directory": str(alice.repo)},
                                 json={"name": "calc", "config": config})
    assert response.status_code == 200, response.text
    for action in ("disconnect", "connect"):
        assert alice.post(f"/mcp/calc/{action}", params={"directory": str(alice.repo)}).status_code == 200
    rows = records_after(mark, object_type="mcp")
    assert [(row.action, row.object_id, row.actor_person) for row in rows] == [
        ("mcp.added", "calc", alice.user.pk), ("mcp.disconnected", "calc", alice.user.pk),
        ("mcp.connected", "calc", alice.user.pk)]
    assert SECRET not in rows[0].details and details(rows[0])["config"]["environment"] == "[redacted]"


def test_an_mcp_servers_oauth_authorization_is_recorded(alice, auth_server):  # noqa: F811
    response = alice.client.post("/api/mcp/server", params={"directory": str(alice.repo)},
                                 json={"name": "remote", "config": {"type": "remote", "url": auth_server.url + "/mcp"}})
    assert response.status_code == 200, response.text
    assert alice.post("/mcp/remote/auth/authenticate", params={"directory": str(alice.repo)}).status_code == 200
    mark = last_id()
    done = alice.post("/mcp/remote/auth/callback", params={"directory": str(alice.repo)}, json={"code": "c"})
    assert done.status_code == 200, done.text
    assert actions_after(mark, object_type="mcp") == ["mcp.authorized"]


def test_a_worktree_created_and_removed_leaves_a_record_each(alice):
    mark = last_id()
    made = alice.post("/experimental/worktree", params={"directory": str(alice.repo)}, json={"name": "audited"})
    assert made.status_code == 200, made.text
    directory = made.json()["directory"]
    removed = alice.client.request("DELETE", "/experimental/worktree", params={"directory": str(alice.repo)},
                                   json={"directory": directory})
    assert removed.status_code == 200
    rows = records_after(mark, object_type="workspace")
    assert [(row.action, row.actor_person) for row in rows] == [("worktree.created", alice.user.pk),
                                                                 ("worktree.removed", alice.user.pk)]
    assert details(rows[0])["directory"] == directory and details(rows[0])["branch"] == "opencode/audited"
    assert details(rows[1])["filesRemoved"] is True
