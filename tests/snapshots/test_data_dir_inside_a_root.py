"""Snapshots and revert with the server's data dir (and so the snapshot store) inside the person's root, as a
checkout's default `.data` under a root of `$HOME/src`: every snapshot failed there ("not a git repository"),
because the empty tmpfs that hides the data dir from the person's sandbox was mode 0700 and root's, so their
uid could not reach their own snapshot store mounted below it."""
from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.files.server_inside_root import alice_inside, inside  # noqa: F401 — fixtures
from tests.snapshots.conftest import messages_of, parts_of, text_prompt, wait_idle


def test_a_turn_is_snapshotted_and_reverted(alice_inside, inside, fake_llm):
    configure_fake_provider(alice_inside, fake_llm)
    repo = inside.home / "repo"
    session = alice_inside.post("/session", params={"directory": str(repo)}, json={}).json()
    fake_llm.script(
        Reply(tool_calls=[("write", {"filePath": str(repo / "new.txt"), "content": "fresh\n"}),
                          ("bash", {"command": "printf 'bye\\n' > README.md", "description": "edit"})]),
        Reply(text="done"))
    response = alice_inside.post(f"/session/{session['id']}/message", json=text_prompt("change files"))
    assert response.status_code == 200, response.text
    wait_idle(alice_inside, session["id"])
    messages = messages_of(alice_inside, session["id"])
    patch = parts_of(messages, "patch")
    assert patch, inside.live.log()[-3000:]
    assert sorted(patch[0]["files"]) == [str(repo / "README.md"), str(repo / "new.txt")]
    assert "not a git repository" not in inside.live.log()
    # The store is in the data dir, inside her root, and never in her repository.
    assert (inside.data / "snapshot" / str(alice_inside.user.pk)).is_dir()

    reverted = alice_inside.post(f"/session/{session['id']}/revert", json={"messageID": messages[0]["info"]["id"]})
    assert reverted.status_code == 200, reverted.text
    assert (repo / "README.md").read_text() == "hello\n" and not (repo / "new.txt").exists()
    assert alice_inside.post(f"/session/{session['id']}/unrevert").status_code == 200
    assert (repo / "README.md").read_text() == "bye\n" and (repo / "new.txt").read_text() == "fresh\n"
