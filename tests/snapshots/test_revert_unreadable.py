"""A revert or unrevert whose snapshots cannot be read refuses (409 SnapshotUnavailableError) and changes
nothing: no file touched, the session's revert state as it was, every message still there."""
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from tests.fakes.fixtures import Reply
from tests.snapshots.conftest import messages_of, text_prompt, wait_idle


def snapshot_stores(persona) -> list[Path]:
    """The persona's snapshot repositories (snapshot/<owner>/<project>/<hash of worktree>)."""
    base = Path(settings.SHARED_DIR) / "snapshot" / str(persona.user.pk)
    return [store for project in base.iterdir() for store in project.iterdir()]


def delete(store: Path) -> None:
    shutil.rmtree(store)


def damage(store: Path) -> None:
    # As a disk error or a careless hand leaves it: git no longer takes it for a repository.
    (store / "HEAD").write_text("garbage\n")
    shutil.rmtree(store / "objects")


DAMAGES = [pytest.param(delete, id="deleted"), pytest.param(damage, id="damaged")]


def state(persona, session_id: str) -> dict:
    files = {name: (persona.repo / name).read_text() if (persona.repo / name).exists() else None
             for name in ("README.md", "new.txt")}
    session = persona.get(f"/session/{session_id}").json()
    return {"files": files, "revert": session.get("revert"), "messages": messages_of(persona, session_id)}


def assert_refused(response) -> None:
    assert response.status_code == 409, response.text
    body = response.json()
    assert body["name"] == "SnapshotUnavailableError"
    assert "snapshot" in body["data"]["message"].lower()


@pytest.mark.parametrize("hurt", DAMAGES)
def test_a_revert_whose_snapshots_cannot_be_read_refuses_and_changes_nothing(alice, session_of, edit_turn, hurt):
    session = session_of()
    edit_turn(session["id"])
    for store in snapshot_stores(alice):
        hurt(store)
    before = state(alice, session["id"])
    user_id = before["messages"][0]["info"]["id"]
    assert_refused(alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id}))
    assert_refused(alice.post(f"/api/session/{session['id']}/revert/stage", json={"messageID": user_id}))
    assert state(alice, session["id"]) == before
    assert before["files"] == {"README.md": "bye\nworld\nagain\n", "new.txt": "fresh\n"}
    assert before["revert"] is None


@pytest.mark.parametrize("hurt", DAMAGES)
def test_an_unrevert_whose_snapshot_cannot_be_read_refuses_and_changes_nothing(alice, session_of, edit_turn, hurt):
    session = session_of()
    edit_turn(session["id"])
    user_id = messages_of(alice, session["id"])[0]["info"]["id"]
    assert alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id}).status_code == 200
    for store in snapshot_stores(alice):
        hurt(store)
    before = state(alice, session["id"])
    assert before["files"] == {"README.md": "hello\n", "new.txt": None} and before["revert"]["snapshot"]
    assert_refused(alice.post(f"/session/{session['id']}/unrevert"))
    assert_refused(alice.post(f"/api/session/{session['id']}/revert/clear"))
    # Moving the boundary starts from the snapshot taken at the first revert: unreadable too.
    assert_refused(alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id}))
    assert state(alice, session["id"]) == before


def test_a_turn_whose_snapshots_failed_cannot_be_reverted_as_if_restored(alice, llm, session_of):
    session = session_of()
    owner_dir = Path(settings.SHARED_DIR) / "snapshot" / str(alice.user.pk)
    shutil.rmtree(owner_dir, ignore_errors=True)  # an earlier test's user of the same id left hers
    owner_dir.parent.mkdir(parents=True, exist_ok=True)
    owner_dir.write_text("in the way\n")  # every snapshot of the turn fails
    llm.script(Reply(tool_calls=[("write", {"filePath": str(alice.repo / "new.txt"), "content": "fresh\n"})]),
               Reply(text="done"))
    assert alice.post(f"/session/{session['id']}/message", json=text_prompt("write")).status_code == 200
    wait_idle(alice, session["id"])
    messages = messages_of(alice, session["id"])
    assert not any("snapshot" in p for m in messages for p in m["parts"] if p["type"] == "step-start")
    before = state(alice, session["id"])
    user_id = messages[0]["info"]["id"]
    assert_refused(alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id}))
    owner_dir.unlink()  # the store works again, but the turn's snapshots were never taken
    assert_refused(alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id}))
    assert state(alice, session["id"]) == before
    # The messages alone can still be staged, as the v2 route offers.
    staged = alice.post(f"/api/session/{session['id']}/revert/stage", json={"messageID": user_id, "files": False})
    assert staged.status_code == 200, staged.text
    assert (alice.repo / "new.txt").read_text() == "fresh\n"
