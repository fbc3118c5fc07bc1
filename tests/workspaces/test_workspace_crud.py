"""workspace.create (registering a directory) / list / get / update / delete, good and bad input, isolation."""
import pytest

from tests.workspaces.helpers import git, register

WRONG = "wrk_000000000000000000000000000"


def test_it_registers_an_existing_directory(alice):
    workspace = register(alice, name="main checkout", metadata={"color": "blue"})
    assert workspace["id"].startswith("wrk_")
    assert workspace["type"] == "directory"
    assert workspace["name"] == "main checkout"
    assert workspace["directory"] == str(alice.repo)
    assert workspace["branch"] == "main"
    assert workspace["projectID"] == git(alice.repo, "rev-list", "--max-parents=0", "HEAD")
    assert workspace["metadata"] == {"color": "blue"} and workspace["extra"] == {"color": "blue"}
    assert workspace["archived"] is False and workspace["createdByServer"] is False
    assert set(workspace["time"]) == {"created", "updated"} and workspace["timeUsed"] == workspace["time"]["updated"]


def test_a_plain_directory_belongs_to_the_global_project(alice):
    plain = alice.root / "notes"
    plain.mkdir()
    workspace = register(alice, plain, type="local")
    assert workspace["projectID"] == "global"
    assert workspace["branch"] is None
    assert workspace["name"] == "notes"


def test_projectid_alone_registers_the_projects_worktree(alice):
    project_id = git(alice.repo, "rev-list", "--max-parents=0", "HEAD")
    register(alice)  # makes the project known
    response = alice.post("/api/workspace", json={"type": "directory", "projectID": project_id})
    assert response.status_code == 200, response.text
    assert response.json()["directory"] == str(alice.repo)


@pytest.mark.parametrize("body", [
    {},
    {"directory": "/tmp"},
    {"type": 5, "directory": "/tmp"},
    {"type": "directory"},
    {"type": "directory", "directory": "relative/path"},
    {"type": "directory", "directory": 7},
    {"type": "directory", "directory": "{root}/missing"},
    {"type": "directory", "directory": "{root}/repo", "metadata": "not a map"},
    {"type": "directory", "directory": "{root}/repo", "name": ["x"]},
    {"type": "directory", "directory": "{root}/repo", "projectID": "someotherproject"},
    {"type": "teleporter", "directory": "{root}/repo"},
])
def test_it_rejects_malformed_create_input(alice, body):
    body = {k: v.replace("{root}", str(alice.root)) if isinstance(v, str) else v for k, v in body.items()}
    response = alice.post("/api/workspace", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["name"] in ("BadRequestError", "WorkspaceCreateError")


def test_directories_outside_the_roots_are_refused(alice, bob):
    response = alice.post("/api/workspace", json={"type": "directory", "directory": str(bob.repo)})
    assert response.status_code == 403
    response = alice.post("/api/workspace", json={"type": "directory", "directory": "/etc"})
    assert response.status_code == 403


def test_list_filters_by_project(alice):
    repo_ws = register(alice)
    plain = alice.root / "plain"
    plain.mkdir()
    plain_ws = register(alice, plain)
    everything = alice.get("/api/workspace").json()
    assert [w["id"] for w in everything] == [repo_ws["id"], plain_ws["id"]]
    only = alice.get("/api/workspace", params={"projectID": repo_ws["projectID"]}).json()
    assert [w["id"] for w in only] == [repo_ws["id"]]
    assert alice.get("/api/workspace", params={"projectID": "nothing"}).json() == []


def test_get_update_delete_keeps_the_users_files(alice):
    workspace = register(alice)
    url = f"/api/workspace/{workspace['id']}"
    assert alice.get(url).json() == workspace

    updated = alice.patch(url, json={"name": "renamed", "metadata": {"a": 1}, "archived": True}).json()
    assert (updated["name"], updated["metadata"], updated["archived"]) == ("renamed", {"a": 1}, True)
    assert alice.patch(url, json={"archived": False}).json()["archived"] is False

    # removeFiles is refused for a directory the server did not create
    refused = alice.delete(url, params={"removeFiles": "true"})
    assert refused.status_code == 409 and refused.json()["name"] == "ConflictError"
    assert alice.get(url).status_code == 200

    deleted = alice.delete(url)
    assert deleted.status_code == 200
    assert deleted.json()["removed"] == {"registration": True, "files": False, "sessionsDetached": 0}
    assert (alice.repo / "README.md").read_text() == "hello\n"
    assert alice.get(url).status_code == 404
    assert alice.delete(url).status_code == 404


@pytest.mark.parametrize("body", [
    {"name": 3}, {"metadata": [1]}, {"archived": "yes"}, {"archived": None}, ["not", "an", "object"],
])
def test_it_rejects_malformed_update_input(alice, body):
    workspace = register(alice)
    assert alice.patch(f"/api/workspace/{workspace['id']}", json=body).status_code == 400


def test_unknown_and_malformed_ids(alice):
    assert alice.get(f"/api/workspace/{WRONG}").status_code == 404
    assert alice.patch(f"/api/workspace/{WRONG}", json={}).status_code == 404
    assert alice.delete(f"/api/workspace/{WRONG}").status_code == 404
    assert alice.get("/api/workspace/acc_123").status_code == 400
    assert alice.delete("/api/workspace/nope").status_code == 400


def test_bob_cannot_read_or_change_alices_workspaces(alice, bob):
    workspace = register(alice)
    url = f"/api/workspace/{workspace['id']}"
    assert bob.get(url).status_code == 404
    assert bob.patch(url, json={"name": "bob's"}).status_code == 404
    assert bob.delete(url).status_code == 404
    assert bob.get("/api/workspace").json() == []
    assert all(entry["workspaceID"] != workspace["id"] for entry in bob.get("/api/workspace/status").json())
    assert bob.get("/api/session", params={"workspace": workspace["id"]}).status_code == 404
    assert alice.get(url).json()["name"] == workspace["name"]


def test_anonymous_callers_get_401(anon):
    for method, url in [("GET", "/api/workspace"), ("POST", "/api/workspace"), ("GET", f"/api/workspace/{WRONG}"),
                        ("PATCH", f"/api/workspace/{WRONG}"), ("DELETE", f"/api/workspace/{WRONG}"),
                        ("GET", "/api/workspace/status"), ("POST", "/api/workspace/sync"),
                        ("POST", "/api/workspace/warp")]:
        assert anon.request(method, url, json={} if method in ("POST", "PATCH") else None).status_code == 401


@pytest.mark.parametrize("workspace", ["wrk\x00", "ws_1", "wrk" + "x" * 62, "\x03 \xff\x00"])
def test_a_malformed_workspace_parameter_is_a_400_on_every_database(alice, workspace):
    """A NUL reached PostgreSQL as a 500 before (found by the contract test's fuzzing)."""
    for path in ("/api/pty", "/api/session", "/api/fs/list"):
        response = alice.get(path, params={"workspace": workspace, "directory": ""})
        assert response.status_code == 400, (path, response.text)
        assert response.json()["name"] == "BadRequestError"


def test_an_unknown_workspace_is_a_404(alice):
    assert alice.get("/api/pty", params={"workspace": "wrk_unknown"}).status_code == 404
