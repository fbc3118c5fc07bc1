"""project.list / project.current / project.update on both mounts."""
from tests.conftest import git, make_repo


def root_commit(repo) -> str:
    return git(repo, "rev-list", "--max-parents=0", "HEAD")


def test_current_project_of_a_repo_is_its_root_commit(alice):
    response = alice.get("/project/current", params={"directory": str(alice.repo)})
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == root_commit(alice.repo)
    assert body["worktree"] == str(alice.repo)
    assert body["vcs"] == "git"
    assert body["sandboxes"] == []
    assert isinstance(body["time"]["created"], int) and isinstance(body["time"]["updated"], int)


def test_a_subdirectory_of_a_repo_belongs_to_the_repos_project(alice):
    sub = alice.repo / "src" / "deep"
    sub.mkdir(parents=True)
    body = alice.get("/project/current", params={"directory": str(sub)}).json()
    assert body["id"] == root_commit(alice.repo)
    assert body["worktree"] == str(alice.repo)
    assert alice.get("/path", params={"directory": str(sub)}).json()["directory"] == str(sub)


def test_a_non_git_directory_is_the_global_project(alice):
    plain = alice.root / "plain"
    plain.mkdir()
    body = alice.get("/project/current", params={"directory": str(plain)}).json()
    assert body["id"] == "global"
    assert body["worktree"] == "/"
    assert "vcs" not in body


def test_project_list_holds_only_the_callers_projects(alice, bob):
    other = make_repo(alice.root / "other", {"a.txt": "a\n"})
    alice.get("/project/current", params={"directory": str(other)})
    bob.get("/project/current")
    ids = {p["id"] for p in alice.get("/project").json()}
    assert root_commit(other) in ids
    assert root_commit(bob.repo) not in ids
    v2_ids = {p["id"] for p in alice.get("/api/project").json()}
    assert v2_ids == ids


def test_project_update_sets_name_icon_and_commands(alice):
    project_id = alice.get("/project/current", params={"directory": str(alice.repo)}).json()["id"]
    response = alice.patch(f"/project/{project_id}", json={
        "name": "Demo", "icon": {"url": "https://example.com/i.png", "color": "blue"}, "commands": {"start": "make"},
    })
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["name"] == "Demo"
    assert body["icon"] == {"url": "https://example.com/i.png", "color": "blue"}
    assert body["commands"] == {"start": "make"}
    again = alice.patch(f"/project/{project_id}", json={"name": "Demo 2", "bogus": 1}).json()
    assert again["name"] == "Demo 2" and again["icon"]["color"] == "blue"
    assert again["time"]["updated"] >= body["time"]["updated"]


def test_project_update_rejects_wrong_types(alice):
    project_id = alice.get("/project/current", params={"directory": str(alice.repo)}).json()["id"]
    for body in ({"name": 5}, {"icon": {"color": 1}}, {"commands": {"start": 3}}, ["x"]):
        response = alice.patch(f"/project/{project_id}", json=body)
        assert response.status_code == 400, body
        assert response.json()["name"] == "BadRequestError"


def test_project_update_of_unknown_or_other_users_project_is_404(alice, bob):
    bobs = bob.get("/project/current", params={"directory": str(bob.repo)}).json()["id"]
    for project_id in ("prj_nope", bobs, "0" * 40):
        response = alice.patch(f"/project/{project_id}", json={"name": "x"})
        assert response.status_code == 404
        assert response.json()["name"] == "NotFoundError"
        assert alice.get(f"/api/project/{project_id}").status_code == 404
        assert alice.patch(f"/api/project/{project_id}", json={"name": "x"}).status_code == 404


def test_v2_project_get_and_update_use_string_icon_and_command_list(alice):
    project_id = alice.get("/project/current", params={"directory": str(alice.repo)}).json()["id"]
    response = alice.patch(f"/api/project/{project_id}", json={
        "name": "V2", "icon": "🚀", "commands": [{"name": "start", "command": "npm start"}],
    })
    assert response.status_code == 200, response.text
    body = alice.get(f"/api/project/{project_id}").json()
    assert body["name"] == "V2" and body["icon"] == "🚀"
    assert body["commands"] == [{"name": "start", "command": "npm start"}]
    assert alice.get("/project/current", params={"directory": str(alice.repo)}).json()["commands"] == {
        "start": "npm start"}
    bad = alice.patch(f"/api/project/{project_id}", json={"commands": [{"name": 1}]})
    assert bad.status_code == 400


def test_the_original_routes_show_only_the_command_opencode_1_18_knows(alice):
    project_id = alice.get("/project/current", params={"directory": str(alice.repo)}).json()["id"]
    both = [{"name": "start", "command": "npm start"}, {"name": "build", "command": "npm run build"}]
    assert alice.patch(f"/api/project/{project_id}", json={"commands": both}).status_code == 200
    listed = alice.get(f"/api/project/{project_id}").json()["commands"]
    assert sorted(listed, key=lambda c: c["name"]) == sorted(both, key=lambda c: c["name"])  # stored as a map
    assert alice.get("/project/current", params={"directory": str(alice.repo)}).json()["commands"] == {
        "start": "npm start"}  # ProjectCommands has `start` alone
    updated = alice.patch(f"/project/{project_id}", json={"commands": {"start": "make", "other": "x"}})
    assert updated.status_code == 200 and updated.json()["commands"] == {"start": "make"}
