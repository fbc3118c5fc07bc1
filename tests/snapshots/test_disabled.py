from projects_app.models import UserConfig
from tests.fakes.fixtures import Reply
from tests.snapshots.conftest import messages_of, parts_of, text_prompt


def test_a_directory_without_git_has_no_snapshots_but_revert_works(alice, llm):
    plain = alice.root / "plain"
    plain.mkdir()
    session = alice.post("/session", params={"directory": str(plain)}, json={}).json()
    llm.script(Reply(tool_calls=[("write", {"filePath": str(plain / "a.txt"), "content": "a\n"})]), Reply(text="ok"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("write"))
    messages = messages_of(alice, session["id"])
    assert all("snapshot" not in p for p in parts_of(messages, "step-start") + parts_of(messages, "step-finish"))
    assert parts_of(messages, "patch") == []
    assert alice.get(f"/session/{session['id']}/diff").json() == []
    reverted = alice.post(f"/session/{session['id']}/revert", json={"messageID": messages[0]["info"]["id"]})
    assert reverted.status_code == 200
    assert reverted.json()["revert"] == {"messageID": messages[0]["info"]["id"]}
    assert (plain / "a.txt").read_text() == "a\n"
    assert "revert" not in alice.post(f"/session/{session['id']}/unrevert").json()


def test_config_snapshot_false_turns_snapshots_off(alice, llm, session_of):
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "snapshot": False}
    config.save()
    session = session_of()
    llm.script(Reply(tool_calls=[("write", {"filePath": str(alice.repo / "b.txt"), "content": "b\n"})]),
               Reply(text="ok"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("write"))
    messages = messages_of(alice, session["id"])
    assert all("snapshot" not in p for p in parts_of(messages, "step-start"))
    assert alice.get(f"/session/{session['id']}/diff").json() == []
