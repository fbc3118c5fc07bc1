"""workspace.warp moves a session (its pinned directory, workspace and project) into a workspace or back out,
carrying uncommitted changes when asked; and v2 request routes resolve `?workspace=`."""
import os

import pytest

from sessions_app.models import Session
from tests.workspaces.helpers import register, worktree


def new_session(persona, **params):
    response = persona.post("/api/session", params=params, json={"title": "t"})
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_sessions_created_with_workspace_are_pinned_to_it(alice):
    workspace = worktree(alice, name="pinned")
    session = new_session(alice, workspace=workspace["id"])
    assert session["location"] == {"directory": workspace["directory"], "workspaceID": workspace["id"]}
    listed = alice.get("/api/session", params={"workspace": workspace["id"]}).json()["data"]
    assert [s["id"] for s in listed] == [session["id"]]
    unknown = alice.get("/api/session", params={"workspace": "wrk_000000000000000000000000000"})
    assert unknown.status_code == 404


def test_warp_moves_a_session_into_a_workspace_with_its_changes(alice):
    session = new_session(alice, directory=str(alice.repo))
    workspace = worktree(alice, name="warp-target")
    (alice.repo / "README.md").write_text("hello\nedited\n")
    (alice.repo / "notes").mkdir()
    (alice.repo / "notes" / "todo.txt").write_text("untracked\n")

    response = alice.post("/api/workspace/warp", json={"sessionID": session["id"], "workspaceID": workspace["id"],
                                                       "copyChanges": True})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["session"]["directory"] == workspace["directory"]
    assert body["session"]["workspaceID"] == workspace["id"]
    assert body["copied"] == {"patched": ["README.md"], "copied": ["notes/todo.txt"]}
    target = workspace["directory"]
    assert open(os.path.join(target, "README.md")).read() == "hello\nedited\n"
    assert open(os.path.join(target, "notes", "todo.txt")).read() == "untracked\n"
    # the source keeps its changes
    assert (alice.repo / "README.md").read_text() == "hello\nedited\n"

    row = Session.objects.get(id=session["id"])
    assert (row.directory, row.workspace_id) == (target, workspace["id"])
    pinned = alice.get(f"/api/session/{session['id']}").json()["data"]
    assert pinned["location"] == {"directory": target, "workspaceID": workspace["id"]}
    in_workspace = alice.get("/api/session", params={"workspace": workspace["id"]}).json()["data"]
    assert session["id"] in [s["id"] for s in in_workspace]


def test_warp_out_returns_to_the_projects_main_worktree(alice):
    workspace = worktree(alice, name="out")
    session = new_session(alice, workspace=workspace["id"])
    response = alice.post("/api/workspace/warp", json={"sessionID": session["id"], "copyChanges": False})
    assert response.status_code == 200, response.text
    moved = response.json()["session"]
    assert moved["directory"] == str(alice.repo)
    assert "workspaceID" not in moved
    assert Session.objects.get(id=session["id"]).workspace_id is None


def test_warp_without_copy_leaves_files_alone(alice):
    session = new_session(alice, directory=str(alice.repo))
    (alice.repo / "README.md").write_text("local only\n")
    workspace = worktree(alice, name="clean")
    response = alice.post("/api/workspace/warp", json={"sessionID": session["id"], "workspaceID": workspace["id"],
                                                       "copyChanges": False})
    assert response.status_code == 200
    assert response.json()["copied"] is None
    assert open(os.path.join(workspace["directory"], "README.md")).read() == "hello\n"


def test_conflicting_changes_move_nothing(alice):
    session = new_session(alice, directory=str(alice.repo))
    workspace = worktree(alice, name="conflict")
    with open(os.path.join(workspace["directory"], "README.md"), "w") as fh:
        fh.write("different base\n")
    (alice.repo / "README.md").write_text("hello\nmine\n")
    response = alice.post("/api/workspace/warp", json={"sessionID": session["id"], "workspaceID": workspace["id"],
                                                       "copyChanges": True})
    assert response.status_code == 409
    assert response.json()["name"] == "WorkspaceWarpError"
    assert Session.objects.get(id=session["id"]).directory == str(alice.repo)


def test_warp_into_a_registered_directory(alice):
    other = alice.root / "other"
    other.mkdir()
    session = new_session(alice, directory=str(alice.repo))
    workspace = register(alice, other)
    response = alice.post("/api/workspace/warp", json={"sessionID": session["id"], "workspaceID": workspace["id"],
                                                       "copyChanges": False})
    assert response.json()["session"]["directory"] == str(other)
    assert response.json()["session"]["projectID"] == "global"
    # copying changes into a directory without git is refused: the directories' state (409)
    again = alice.post("/api/workspace/warp", json={"sessionID": session["id"], "workspaceID": workspace["id"],
                                                    "copyChanges": True})
    assert again.status_code == 409


@pytest.mark.parametrize("body", [
    {}, {"sessionID": "ses_x"}, {"sessionID": "abc", "copyChanges": False},
    {"sessionID": "ses_x", "copyChanges": "yes"}, {"sessionID": "ses_x", "workspaceID": "acc_1", "copyChanges": False},
])
def test_it_rejects_malformed_warp_input(alice, body):
    assert alice.post("/api/workspace/warp", json=body).status_code == 400


def test_warp_of_unknown_or_foreign_objects_is_404(alice, bob):
    session = new_session(alice, directory=str(alice.repo))
    workspace = worktree(alice, name="mine")
    bobs_workspace = register(bob)
    unknown = {"sessionID": "ses_000000000000000000000000000", "workspaceID": workspace["id"], "copyChanges": False}
    assert alice.post("/api/workspace/warp", json=unknown).status_code == 404
    assert bob.post("/api/workspace/warp", json={"sessionID": session["id"], "workspaceID": bobs_workspace["id"],
                                                 "copyChanges": False}).status_code == 404
    assert alice.post("/api/workspace/warp", json={"sessionID": session["id"], "workspaceID": bobs_workspace["id"],
                                                   "copyChanges": False}).status_code == 404
    assert Session.objects.get(id=session["id"]).directory == str(alice.repo)
    # a session that is in no workspace cannot be warped "out" (409: its state, not the input)
    out = alice.post("/api/workspace/warp", json={"sessionID": session["id"], "copyChanges": False})
    assert out.status_code == 409


def test_deleting_a_workspace_detaches_its_sessions(alice):
    workspace = worktree(alice, name="detach")
    session = new_session(alice, workspace=workspace["id"])
    response = alice.delete(f"/api/workspace/{workspace['id']}")
    assert response.json()["removed"]["sessionsDetached"] == 1
    assert Session.objects.get(id=session["id"]).workspace_id is None
