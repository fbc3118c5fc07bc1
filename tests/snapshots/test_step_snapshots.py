import re

from tests.snapshots.conftest import messages_of, parts_of, wait_idle

HASH = re.compile(r"^[0-9a-f]{40}$")


def test_steps_carry_snapshots_and_a_patch_lists_the_changed_files(alice, session_of, edit_turn):
    session = session_of()
    edit_turn(session["id"])
    messages = messages_of(alice, session["id"])
    tool_step, final_step = messages[1], messages[2]
    starts, finishes = parts_of([tool_step], "step-start"), parts_of([tool_step], "step-finish")
    assert HASH.match(starts[0]["snapshot"]) and HASH.match(finishes[0]["snapshot"])
    assert starts[0]["snapshot"] != finishes[0]["snapshot"]
    patch = parts_of([tool_step], "patch")[0]
    assert patch["hash"] == starts[0]["snapshot"]
    assert sorted(patch["files"]) == sorted([str(alice.repo / "README.md"), str(alice.repo / "new.txt")])
    assert [p["type"] for p in tool_step["parts"]][-2:] == ["step-finish", "patch"]
    # The answer step starts where the tool step ended and changes nothing: no patch part.
    assert parts_of([final_step], "step-start")[0]["snapshot"] == finishes[0]["snapshot"]
    assert parts_of([final_step], "patch") == []


def test_the_summary_is_stored_and_published(alice, session_of, edit_turn, recorder):
    session = session_of()
    events = recorder()
    edit_turn(session["id"])
    summary = alice.get(f"/session/{session['id']}").json()["summary"]
    assert summary == {"additions": 4, "deletions": 1, "files": 2}
    user = messages_of(alice, session["id"])[0]["info"]
    diffs = {d["file"]: d for d in user["summary"]["diffs"]}
    assert diffs["new.txt"]["status"] == "added" and diffs["README.md"]["status"] == "modified"
    event = events.wait_for(lambda e: e["type"] == "session.diff" and e["properties"]["diff"])
    assert event["properties"]["sessionID"] == session["id"]
    assert {d["file"] for d in event["properties"]["diff"]} == {"new.txt", "README.md"}
    types = events.types(session["id"])
    first_patch = next(i for i, e in enumerate(events.of(session["id"]))
                       if e["type"] == "message.part.updated" and e["properties"]["part"]["type"] == "patch")
    assert "session.diff" in types[first_patch:]


def test_ignored_and_large_files_stay_out_of_snapshots(alice, llm, session_of):
    from tests.fakes.fixtures import Reply
    from tests.snapshots.conftest import text_prompt

    (alice.repo / ".gitignore").write_text("ignored.txt\n")
    session = session_of()
    command = "echo x > ignored.txt; python3 -c \"open('big.bin', 'w').write('0' * 3000000)\"; echo y > small.txt"
    llm.script(Reply(tool_calls=[("bash", {"command": command, "description": "files"})]), Reply(text="ok"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("make files"))
    patch = parts_of(messages_of(alice, session["id"]), "patch")[0]
    assert patch["files"] == [str(alice.repo / "small.txt")]
    assert [d["file"] for d in alice.get(f"/session/{session['id']}/diff").json()] == ["small.txt"]


def test_a_step_that_deletes_a_file_lists_it_in_its_patch_and_diff(alice, llm, session_of):
    from tests.fakes.fixtures import Reply
    from tests.snapshots.conftest import text_prompt

    session = session_of()
    llm.script(Reply(tool_calls=[("bash", {"command": "rm README.md", "description": "delete"})]), Reply(text="ok"))
    response = alice.post(f"/session/{session['id']}/message", json=text_prompt("delete the readme"))
    assert response.status_code == 200, response.text
    patch = parts_of(messages_of(alice, session["id"]), "patch")[0]
    assert patch["files"] == [str(alice.repo / "README.md")]
    diff = alice.get(f"/session/{session['id']}/diff").json()
    assert [(d["file"], d["status"]) for d in diff] == [("README.md", "deleted")]


def test_a_file_changed_between_turns_moves_the_snapshot_and_changing_it_back_returns_to_the_old_one(
        alice, llm, session_of):
    """A track that finds nothing to add reuses the tree it wrote last (runtime/snapshots.py): a file edited
    by the person between two prompts, or the same edit undone, must still show in the next snapshot."""
    from tests.fakes.fixtures import Reply
    from tests.snapshots.conftest import text_prompt

    session = session_of()

    def turn() -> tuple[str, str]:
        llm.script(Reply(text="ok"))
        response = alice.post(f"/session/{session['id']}/message", json=text_prompt("look"))
        assert response.status_code == 200, response.text
        wait_idle(alice, session["id"])
        step = messages_of(alice, session["id"])[-1]
        return parts_of([step], "step-start")[0]["snapshot"], parts_of([step], "step-finish")[0]["snapshot"]

    first_start, first_end = turn()
    assert first_start == first_end
    original = (alice.repo / "README.md").read_text()
    (alice.repo / "README.md").write_text(original + "edited by hand\n")
    edited_start, edited_end = turn()
    assert HASH.match(edited_start) and edited_start != first_end and edited_end == edited_start
    (alice.repo / "README.md").write_text(original)
    undone_start, _ = turn()
    assert undone_start == first_end
