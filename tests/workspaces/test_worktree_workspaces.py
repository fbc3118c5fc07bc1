"""type "worktree": `git worktree add` on a new branch in a server-managed directory; removeFiles undoes it."""
import os

from tests.workspaces.helpers import git, worktree, worktree_list


def test_it_creates_a_git_worktree_on_a_new_branch(alice):
    workspace = worktree(alice, name="feature x")
    directory = workspace["directory"]
    assert workspace["type"] == "worktree" and workspace["createdByServer"] is True
    assert workspace["branch"] == "workspace/feature-x"
    assert directory == str(alice.root / ".worktrees" / "repo" / "feature-x")
    assert os.path.isfile(os.path.join(directory, "README.md"))
    assert git(directory, "rev-parse", "--abbrev-ref", "HEAD") == "workspace/feature-x"
    assert directory in worktree_list(alice.repo)
    assert workspace["projectID"] == git(alice.repo, "rev-list", "--max-parents=0", "HEAD")


def test_a_chosen_branch_name_is_used_and_a_taken_one_refused(alice):
    workspace = worktree(alice, name="a", branch="topic/one")
    assert workspace["branch"] == "topic/one"
    again = alice.post("/api/workspace", json={"type": "worktree", "directory": str(alice.repo), "branch": "topic/one"})
    assert again.status_code == 409 and again.json()["name"] == "WorkspaceCreateError"
    bad = alice.post("/api/workspace", json={"type": "worktree", "directory": str(alice.repo), "branch": "a..b"})
    assert bad.status_code == 400


def test_the_same_name_twice_gets_two_directories(alice):
    first = worktree(alice, name="same", branch="b1")
    second = worktree(alice, name="same", branch="b2")
    assert first["directory"] != second["directory"]


def test_a_worktree_needs_a_git_project(alice):
    plain = alice.root / "plain"
    plain.mkdir()
    response = alice.post("/api/workspace", json={"type": "worktree", "directory": str(plain)})
    assert response.status_code == 409 and response.json()["name"] == "WorkspaceCreateError"
    assert alice.post("/api/workspace", json={"type": "worktree"}).status_code == 400
    assert alice.post("/api/workspace", json={"type": "worktree", "projectID": "unknownproject"}).status_code == 404


def test_delete_with_remove_files_removes_only_the_server_worktree(alice):
    workspace = worktree(alice)
    response = alice.delete(f"/api/workspace/{workspace['id']}", params={"removeFiles": "true"})
    assert response.status_code == 200, response.text
    assert response.json()["removed"]["files"] is True
    assert not os.path.exists(workspace["directory"])
    assert workspace["directory"] not in worktree_list(alice.repo)
    assert (alice.repo / "README.md").exists()
    # the branch stays: commits made there are never thrown away
    assert git(alice.repo, "branch", "--list", workspace["branch"])


def test_delete_without_remove_files_keeps_the_worktree(alice):
    workspace = worktree(alice)
    response = alice.delete(f"/api/workspace/{workspace['id']}")
    assert response.json()["removed"]["files"] is False
    assert os.path.isdir(workspace["directory"])
