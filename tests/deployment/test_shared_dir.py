"""A second host with a data dir of its own and the first host's shared dir (AGENTSERVER_SHARED_DIR): the
snapshot store, server-made worktrees and users' HOMEs follow a session from one host to the other, and a
user's sandbox still sees only their own corner of either directory."""
import os

import pytest
from django.conf import settings

from tests.conftest import make_repo
from tests.runner.test_restart_and_retry import Remote
from tests.snapshots.conftest import messages_of


@pytest.fixture(scope="module")
def host_b(server_factory, tmp_path_factory):
    """Its own data dir; the shared dir is the first host's (its default: its data dir)."""
    data = tmp_path_factory.mktemp("host-b-data")
    return server_factory({"AGENTSERVER_DATA_DIR": str(data), "AGENTSERVER_SHARED_DIR": str(settings.DATA_DIR)})


def shell(persona, session_id: str, command: str) -> str:
    response = persona.post(f"/session/{session_id}/shell", json={"agent": "build", "command": command})
    assert response.status_code == 200, response.text
    return response.json()["parts"][0]["state"]["output"]


def test_a_turn_on_one_host_reverts_and_unreverts_on_the_other(alice, session_of, edit_turn, host_b):
    b = Remote(alice, host_b.url)
    session = session_of()
    edit_turn(session["id"])  # on the first host: snapshots taken into the shared store
    user_id = messages_of(alice, session["id"])[0]["info"]["id"]

    reverted = b.post(f"/session/{session['id']}/revert", json={"messageID": user_id})
    assert reverted.status_code == 200, reverted.text
    assert "deleted file mode" in reverted.json()["revert"]["diff"]
    assert (alice.repo / "README.md").read_text() == "hello\n"
    assert not (alice.repo / "new.txt").exists()

    assert b.post(f"/session/{session['id']}/unrevert").status_code == 200
    assert (alice.repo / "README.md").read_text() == "bye\nworld\nagain\n"
    assert (alice.repo / "new.txt").read_text() == "fresh\n"
    diff = {d["file"]: d for d in b.get(f"/session/{session['id']}/diff").json()}
    assert set(diff) == {"README.md", "new.txt"} and diff["new.txt"]["after"] == "fresh\n"
    assert not os.path.exists(os.path.join(host_b.env["AGENTSERVER_DATA_DIR"], "snapshot"))


def test_a_users_home_follows_them_to_the_other_host(alice, llm, session_of, host_b):
    b = Remote(alice, host_b.url)
    session = session_of()
    assert shell(alice, session["id"], "git config --global user.name 'Alice A' && echo $HOME") \
        == os.path.join(settings.DATA_DIR, "users", str(alice.user.pk), "home") + "\n"
    assert shell(b, session["id"], "git config --global user.name") == "Alice A\n"


def test_the_sandbox_on_the_other_host_shows_neither_data_dir_nor_other_users(alice, bob, llm, session_of,
                                                                               host_b):
    b = Remote(alice, host_b.url)
    users = os.path.join(settings.DATA_DIR, "users")
    os.makedirs(os.path.join(users, str(bob.user.pk), "home"), exist_ok=True)
    with open(os.path.join(users, str(bob.user.pk), "home", "mine"), "w") as mine:
        mine.write("bob\n")
    session = session_of()
    seen = shell(b, session["id"], f"ls {users}; ls {host_b.env['AGENTSERVER_DATA_DIR']} 2>&1; "
                                   f"cat {users}/{bob.user.pk}/home/mine 2>&1; true")
    lines = seen.splitlines()
    assert lines[0] == str(alice.user.pk)  # only her own corner of the shared dir is mounted
    assert "No such file or directory" in lines[1]
    assert "No such file or directory" in lines[2] and "bob" not in lines[2:]


def test_a_worktree_made_on_one_host_works_from_the_other(alice, tmp_path, host_b):
    from auth_app.tokens import roots_add

    solo = make_repo(tmp_path / "solo")  # a root of its own: its worktrees go to the shared dir
    roots_add(user=alice.user, path=str(solo))
    made = alice.post("/api/workspace", json={"type": "worktree", "directory": str(solo), "name": "across"})
    assert made.status_code == 200, made.text
    workspace = made.json()
    assert workspace["directory"].startswith(os.path.join(str(settings.DATA_DIR), "worktrees", str(alice.user.pk)))

    b = Remote(alice, host_b.url)
    read = b.get("/api/fs/file", params={"workspace": workspace["id"], "path": "README.md"})
    assert read.status_code == 200, read.text
    assert read.json()["location"]["directory"] == workspace["directory"]
    assert read.json()["data"]["content"] == "hello\n"
    synced = b.post("/api/workspace/sync", json={})
    assert synced.status_code == 200, synced.text
    listed = [w["id"] for w in b.get("/api/workspace").json()]
    assert workspace["id"] in listed
    assert os.path.isdir(workspace["directory"])
