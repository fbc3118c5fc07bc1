import pytest

from tests.pty.conftest import create_pty, shell_body, wait_for


def test_create_returns_the_reference_shape(alice, cleanup_ptys):
    pty = create_pty(alice, command="/bin/sh", args=["-i"], title="mine", cwd=str(alice.repo))
    assert set(pty) == {"id", "title", "command", "args", "cwd", "status", "pid"}
    assert pty["id"].startswith("pty_")
    assert pty["title"] == "mine"
    assert pty["command"] == "/bin/sh"
    assert pty["args"] == ["-i", "-l"]  # the reference appends -l to every *sh command
    assert pty["cwd"] == str(alice.repo)
    assert pty["status"] == "running"
    assert pty["pid"] > 0


def test_defaults_are_the_shell_the_default_directory_and_a_terminal_title(alice, cleanup_ptys):
    pty = create_pty(alice)
    assert pty["command"].endswith("sh")
    assert pty["args"] == ["-l"]
    assert pty["cwd"] == str(alice.root)
    assert pty["title"] == "Terminal " + pty["id"][-4:]


def test_a_relative_cwd_is_resolved_against_the_directory(alice, cleanup_ptys):
    pty = create_pty(alice, cwd="repo")
    assert pty["cwd"] == str(alice.repo)


def test_list_get_update_remove(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body(cwd=str(alice.repo)))
    assert [p["id"] for p in alice.get("/pty").json()] == [pty["id"]]
    assert alice.get(f"/pty/{pty['id']}").json() == pty
    updated = alice.put(f"/pty/{pty['id']}", json={"title": "renamed", "size": {"rows": 30, "cols": 100}})
    assert updated.status_code == 200
    assert updated.json() == {**pty, "title": "renamed"}
    assert alice.put(f"/pty/{pty['id']}", json={}).json()["title"] == "renamed"
    removed = alice.delete(f"/pty/{pty['id']}")
    assert removed.status_code == 200 and removed.json() is True
    assert alice.get(f"/pty/{pty['id']}").status_code == 404
    assert alice.delete(f"/pty/{pty['id']}").status_code == 404
    assert alice.get("/pty").json() == []


def test_list_is_filtered_by_directory(alice, cleanup_ptys):
    in_root = create_pty(alice, **shell_body())
    in_repo = alice.post("/pty", params={"directory": str(alice.repo)}, json=shell_body()).json()
    assert [p["id"] for p in alice.get("/pty").json()] == [in_root["id"]]
    assert [p["id"] for p in alice.get("/pty", params={"directory": str(alice.repo)}).json()] == [in_repo["id"]]
    alice.delete(f"/pty/{in_repo['id']}")


@pytest.mark.parametrize("body, field", [
    ({"command": 5}, "command"),
    ({"args": "x"}, "args"),
    ({"env": {"A": 1}}, "env"),
    ({"title": ["x"]}, "title"),
    ({"env": {"A=B": "x"}}, "env"),
])
def test_bad_create_input_is_a_400(alice, body, field):
    response = alice.post("/pty", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["name"] == "BadRequestError"
    assert field in response.text
    assert alice.get("/pty").json() == []


@pytest.mark.parametrize("body, what", [
    ({"command": "/no/such/binary"}, "Command not found"),
    ({"command": "no-such-command-anywhere"}, "Command not found"),
    ({"cwd": "missing-dir"}, "Working directory does not exist"),
])
def test_a_program_or_directory_that_is_not_there_is_a_404(alice, body, what):
    response = alice.post("/pty", json=body)
    assert response.status_code == 404, response.text
    assert response.json()["name"] == "NotFoundError" and what in response.json()["data"]["message"]
    assert alice.get("/pty").json() == []


def test_a_cwd_outside_the_roots_is_refused(alice, bob):
    response = alice.post("/pty", json={"cwd": str(bob.root)})
    assert response.status_code == 403
    assert alice.get("/pty").json() == []


@pytest.mark.parametrize("body", [
    {"size": {"rows": 30}},
    {"size": {"rows": 0, "cols": 10}},
    {"size": {"rows": "x", "cols": 10}},
    {"title": 3},
])
def test_bad_update_input_is_a_400(alice, cleanup_ptys, body):
    pty = create_pty(alice, **shell_body())
    assert alice.put(f"/pty/{pty['id']}", json=body).status_code == 400


def test_unknown_and_malformed_ids(alice):
    assert alice.get("/pty/pty_nope").status_code == 404
    assert alice.get("/pty/pty_nope").json()["data"]["message"] == "PTY session not found: pty_nope"
    assert alice.put("/pty/pty_nope", json={"title": "x"}).status_code == 404
    assert alice.delete("/pty/pty_nope").status_code == 404
    assert alice.get("/pty/abc").status_code == 400
    assert alice.get("/pty/pty_nope/connect").status_code == 404


def test_anonymous_callers_get_401(anon):
    assert anon.get("/pty").status_code == 401
    assert anon.post("/pty", json={}).status_code == 401
    assert anon.get("/pty/pty_x").status_code == 401
    assert anon.put("/pty/pty_x", json={}).status_code == 401
    assert anon.delete("/pty/pty_x").status_code == 401
    assert anon.get("/api/pty").status_code == 401


def test_bob_cannot_see_or_touch_alices_terminal(alice, bob, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    assert bob.get("/pty").json() == []
    assert bob.get(f"/pty/{pty['id']}").status_code == 404
    assert bob.put(f"/pty/{pty['id']}", json={"title": "x", "size": {"rows": 5, "cols": 5}}).status_code == 404
    assert bob.delete(f"/pty/{pty['id']}").status_code == 404
    assert bob.get(f"/api/pty/{pty['id']}").status_code == 404
    assert alice.get(f"/pty/{pty['id']}").json()["title"] == pty["title"]


def test_a_plain_get_on_connect_is_a_400(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    assert alice.get(f"/pty/{pty['id']}/connect").status_code == 400


def test_v2_routes_wrap_records_in_location_and_data(alice, cleanup_ptys):
    created = alice.post("/api/pty", params={"directory": str(alice.repo)}, json={"shell": "/bin/sh"})
    assert created.status_code == 200, created.text
    body = created.json()
    assert body["location"]["directory"] == str(alice.repo)
    assert body["location"]["project"]["directory"] == str(alice.repo)
    pty = body["data"]
    assert pty["command"] == "/bin/sh" and pty["args"] == ["-l"]
    listed = alice.get("/api/pty", params={"directory": str(alice.repo)}).json()
    assert [p["id"] for p in listed["data"]] == [pty["id"]]
    assert alice.get(f"/api/pty/{pty['id']}").json()["data"]["id"] == pty["id"]
    patched = alice.patch(f"/api/pty/{pty['id']}", json={"title": "v2", "size": {"columns": 90, "rows": 20}})
    assert patched.status_code == 200 and patched.json()["data"]["title"] == "v2"
    assert alice.patch(f"/api/pty/{pty['id']}", json={"size": {"rows": 20}}).status_code == 400
    assert alice.delete(f"/api/pty/{pty['id']}").status_code == 204
    assert alice.get(f"/api/pty/{pty['id']}").status_code == 404


def test_v2_shell_with_command_runs_the_command_in_that_shell(alice, cleanup_ptys):
    pty = alice.post("/api/pty", json={"shell": "/bin/sh", "command": "exit 3"}).json()["data"]
    assert pty["args"][:2] == ["-c", "exit 3"]
    assert wait_for(lambda: alice.get(f"/pty/{pty['id']}").status_code == 404)


def test_events_for_create_update_and_remove(alice, alice_events, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    alice.put(f"/pty/{pty['id']}", json={"title": "renamed"})
    alice.delete(f"/pty/{pty['id']}")
    seen = wait_for(lambda: len(alice_events.of(pty["id"])) >= 3 and alice_events.of(pty["id"]))
    assert [kind for kind, _ in seen] == ["pty.created", "pty.updated", "pty.deleted"]
    assert seen[0][1] == {"info": pty}
    assert seen[1][1]["info"]["title"] == "renamed"
    assert seen[2][1] == {"id": pty["id"]}
    assert all(alice_events.directory_of(kind, props) == str(alice.root) for kind, props in seen)


def test_shells_lists_the_machines_login_shells(alice):
    shells = alice.get("/pty/shells").json()
    assert any(shell["acceptable"] and shell["path"].endswith("sh") for shell in shells)
    assert all(set(shell) == {"path", "name", "acceptable"} for shell in shells)
