"""workspace.status (per workspace: exists, branch, dirty count, ahead/behind) and workspace.sync (prune
vanished registrations, register unregistered git worktrees, refresh branches)."""
import shutil

from tests.workspaces.helpers import git, register, worktree


def test_status_reports_branch_dirty_files_and_ahead_behind(alice):
    main = register(alice)
    feature = worktree(alice, name="feat")
    directory = feature["directory"]
    with open(f"{directory}/new.txt", "w") as fh:
        fh.write("x\n")
    git(directory, "add", "new.txt")
    git(directory, "commit", "-q", "-m", "one ahead")
    with open(f"{directory}/README.md", "a") as fh:
        fh.write("changed\n")
    with open(f"{directory}/scratch.txt", "w") as fh:
        fh.write("untracked\n")

    status = {entry["workspaceID"]: entry for entry in alice.get("/api/workspace/status").json()}
    assert status[feature["id"]]["status"] == "connected"
    assert status[feature["id"]]["exists"] is True
    assert status[feature["id"]]["branch"] == "workspace/feat"
    assert status[feature["id"]]["dirty"] == 2
    assert (status[feature["id"]]["ahead"], status[feature["id"]]["behind"]) == (1, 0)
    assert status[main["id"]]["dirty"] == 0 and status[main["id"]]["branch"] == "main"


def test_status_marks_vanished_directories_disconnected(alice):
    plain = alice.root / "gone"
    plain.mkdir()
    workspace = register(alice, plain)
    shutil.rmtree(plain)
    [entry] = alice.get("/api/workspace/status").json()
    assert entry["workspaceID"] == workspace["id"]
    assert (entry["status"], entry["exists"]) == ("disconnected", False)


def test_sync_prunes_vanished_registrations_and_registers_new_worktrees(alice):
    kept = register(alice)
    plain = alice.root / "gone"
    plain.mkdir()
    vanished = register(alice, plain)
    shutil.rmtree(plain)
    manual = alice.root / "manual-wt"
    git(alice.repo, "worktree", "add", "-q", "-b", "manual", str(manual))
    git(alice.repo, "checkout", "-q", "-b", "renamed")

    result = alice.post("/api/workspace/sync").json()
    assert result["pruned"] == [vanished["id"]]
    assert [w["directory"] for w in result["registered"]] == [str(manual)]
    assert result["registered"][0]["type"] == "worktree" and result["registered"][0]["branch"] == "manual"
    by_id = {w["id"]: w for w in result["workspaces"]}
    assert vanished["id"] not in by_id
    assert by_id[kept["id"]]["branch"] == "renamed"
    # a second sync finds nothing new
    again = alice.post("/api/workspace/sync").json()
    assert again["pruned"] == [] and again["registered"] == []


def test_sync_and_status_are_per_user(alice, bob):
    register(alice)
    assert bob.get("/api/workspace/status").json() == []
    assert bob.post("/api/workspace/sync").json() == {"pruned": [], "registered": [], "workspaces": []}
