"""path.get and vcs.get."""
from django.conf import settings

from tests.conftest import git, make_repo


def test_path_reports_the_users_home_and_private_dirs(alice):
    body = alice.get("/path", params={"directory": str(alice.repo)}).json()
    assert body["home"] == str(alice.root)
    assert body["directory"] == str(alice.repo)
    assert body["worktree"] == str(alice.repo)
    data_dir = str(settings.DATA_DIR)
    assert body["state"].startswith(data_dir) and body["config"].startswith(data_dir)
    assert body["state"] != body["config"]
    import os

    assert os.path.expanduser("~") not in (body["home"], body["state"], body["config"])


def test_path_of_a_plain_directory_has_root_worktree(alice):
    body = alice.get("/path").json()
    assert body["directory"] == str(alice.root)
    assert body["worktree"] == "/"


def test_users_get_different_private_dirs(alice, bob):
    assert alice.get("/path").json()["state"] != bob.get("/path").json()["state"]


def test_vcs_reports_branch_and_default_branch(alice):
    assert alice.get("/vcs", params={"directory": str(alice.repo)}).json() == {
        "branch": "main", "default_branch": "main"}
    assert alice.get("/api/vcs", params={"directory": str(alice.repo)}).json()["branch"] == "main"


def test_vcs_on_another_branch_without_main(alice):
    repo = make_repo(alice.root / "r2")
    git(repo, "checkout", "-q", "-b", "dev")
    git(repo, "branch", "-q", "-D", "main")
    assert alice.get("/vcs", params={"directory": str(repo)}).json() == {"branch": "dev"}  # no default: no key


def test_vcs_of_a_non_git_directory_has_no_branch(alice):
    assert alice.get("/vcs").json() == {}  # opencode's VcsInfo: absent, never null
    assert alice.get("/api/vcs").json() == {}
