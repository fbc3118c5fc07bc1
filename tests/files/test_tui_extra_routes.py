"""The routes opencode's TUI calls at start-up beyond the core API, in the recorded shapes (transcripts
`extra.*`), answered from real state: project directories, workspaces, status, config-driven lists."""
from tests.files.helpers import params
from tests.workspaces.helpers import register, worktree


def project_id_of(persona) -> str:
    return persona.get("/project/current", params=params(persona)).json()["id"]


def configure(persona, patch: dict):
    r = persona.patch("/config", params=params(persona), json=patch)
    assert r.status_code == 200, r.text


def test_capabilities_and_console_have_the_recorded_shapes(alice):
    assert alice.get("/experimental/capabilities").json() == {"backgroundSubagents": False}
    assert alice.get("/experimental/console").json() == {"consoleManagedProviders": [], "switchableOrgCount": 0}


def test_project_directories_lists_the_worktree_and_its_workspaces(alice):
    project_id = project_id_of(alice)
    assert alice.get(f"/project/{project_id}/directories").json() == [{"directory": str(alice.repo)}]
    created = worktree(alice, name="feature")
    directories = alice.get(f"/project/{project_id}/directories").json()
    assert directories[0] == {"directory": str(alice.repo)}
    assert {"directory": created["directory"], "strategy": "worktree"} in directories


def test_project_directories_of_an_unknown_or_foreign_project_is_404(alice, bob):
    project_id = project_id_of(alice)
    assert bob.get(f"/project/{project_id}/directories").status_code == 404
    assert alice.get("/project/" + "0" * 40 + "/directories").status_code == 404


def test_experimental_workspaces_list_the_projects_workspaces_in_the_1_18_shape(alice, bob):
    assert alice.get("/experimental/workspace", params=params(alice)).json() == []
    created = worktree(alice, name="feature")
    [listed] = alice.get("/experimental/workspace", params=params(alice)).json()
    assert set(listed) == {"id", "type", "name", "branch", "directory", "extra", "projectID", "timeUsed"}
    assert listed["id"] == created["id"] and listed["projectID"] == project_id_of(alice)
    assert alice.get("/experimental/workspace/status", params=params(alice)).json() == \
        [{"workspaceID": created["id"], "status": "connected"}]
    assert bob.get("/experimental/workspace").json() == []
    assert bob.get("/experimental/workspace/status").json() == []


def test_a_workspace_of_another_project_is_not_listed(alice):
    other = alice.root / "other"
    other.mkdir()
    register(alice, directory=other)
    assert alice.get("/experimental/workspace", params=params(alice)).json() == []


def test_experimental_resource_is_a_map(alice):
    r = alice.get("/experimental/resource")
    assert r.status_code == 200 and isinstance(r.json(), dict)


def test_location_is_the_runtime_context_also_from_the_location_query_form(alice):
    project_id = project_id_of(alice)
    expected = {"directory": str(alice.repo), "project": {"id": project_id, "directory": str(alice.repo)}}
    assert alice.get("/api/location", params=params(alice)).json() == expected
    sub = alice.repo / "pkg"
    sub.mkdir()
    r = alice.get("/api/location", params={"location[directory]": str(sub)})
    assert r.json() == {"directory": str(sub), "project": {"id": project_id, "directory": str(alice.repo)}}


def test_location_refuses_a_directory_outside_the_callers_roots(alice, bob):
    assert bob.get("/api/location", params={"location[directory]": str(alice.repo)}).status_code == 403
    assert bob.get("/api/location", params={"directory": str(alice.repo)}).status_code == 403


def test_reference_lists_configured_references(alice):
    r = alice.get("/api/reference", params=params(alice)).json()
    assert r["data"] == [] and r["location"]["directory"] == str(alice.repo)
    configure(alice, {"reference": {"docs": {"type": "local", "path": "docs"},
                                    "sdk": {"type": "git", "repository": "https://example.com/sdk.git"}}})
    data = alice.get("/api/reference", params=params(alice)).json()["data"]
    assert {"name": "docs", "path": str(alice.repo / "docs"), "source": {"type": "local", "path": "docs"}} in data
    assert any(item["name"] == "sdk" and item["path"] == "https://example.com/sdk.git" for item in data)


def test_integration_lists_providers_with_their_connection_methods(alice):
    r = alice.get("/api/integration", params=params(alice))
    assert r.status_code == 200
    data = {item["id"]: item for item in r.json()["data"]}
    assert data, "the catalog has providers"
    anthropic = data.get("anthropic")
    if anthropic:
        types = [m["type"] for m in anthropic["methods"]]
        assert "oauth" in types and "key" in types
    for item in data.values():
        assert set(item) == {"id", "name", "methods", "connections"}


def test_integration_shows_a_saved_account_as_a_connection(alice):
    r = alice.post("/api/auth", json={"serviceID": "openai", "credential": {"type": "api", "key": "sk-test-123456"},
                                      "description": "work key", "active": True})
    assert r.status_code == 200, r.text
    data = {item["id"]: item for item in alice.get("/api/integration", params=params(alice)).json()["data"]}
    [connection] = [c for c in data["openai"]["connections"] if c["type"] == "credential"]
    assert connection["label"] == "work key"
    assert "sk-test" not in str(data["openai"])


def test_lsp_lists_no_server_before_an_edit_and_formatter_lists_the_built_in_ones(alice):
    assert alice.get("/lsp").json() == []
    assert alice.get("/api/lsp", params=params(alice)).json()["data"] == []
    formatters = {item["name"]: item for item in alice.get("/formatter").json()}
    assert {"ruff", "prettier", "gofmt", "rustfmt", "clang-format"} <= set(formatters)
    assert formatters["ruff"] == {"name": "ruff", "extensions": [".py", ".pyi"], "enabled": False}  # no ruff config
    assert alice.get("/api/formatter", params=params(alice)).json()["data"] == alice.get(
        "/formatter", params=params(alice)).json()


def test_configured_formatters_are_enabled_and_configured_servers_wait_for_an_edit(alice):
    configure(alice, {"formatter": {"ruff": {"command": ["ruff", "format", "$FILE"], "extensions": [".py"]}},
                      "lsp": {"pyright": {"command": ["pyright-langserver", "--stdio"], "extensions": [".py"]}}})
    formatters = {item["name"]: item for item in alice.get("/formatter", params=params(alice)).json()}
    assert formatters["ruff"] == {"name": "ruff", "extensions": [".py"], "enabled": True}
    assert alice.get("/api/lsp", params=params(alice)).json()["data"] == []
    configure(alice, {"formatter": False, "lsp": False})
    assert alice.get("/formatter", params=params(alice)).json() == []


def test_anonymous_callers_get_401_on_the_extra_routes(anon):
    for url in ("/experimental/capabilities", "/experimental/console", "/experimental/resource",
                "/experimental/workspace", "/experimental/workspace/status", "/project/x/directories",
                "/api/location", "/api/reference", "/api/integration", "/formatter", "/api/formatter"):
        assert anon.get(url).status_code == 401, url


def test_the_global_projects_directories_are_the_users_roots_not_the_filesystem_root(alice):
    plain = alice.root / "plain"
    plain.mkdir()
    project = alice.get("/project/current", params={"directory": str(plain)}).json()
    assert project["id"] == "global"
    assert alice.get("/project/global/directories").json() == [{"directory": str(alice.root)}]


def test_charlie_without_roots_is_refused_on_context_routes(charlie):
    for url in ("/api/fs/tree", "/api/vcs/status", "/api/location", "/file?path=.", "/experimental/workspace"):
        assert charlie.get(url).status_code == 403, url
