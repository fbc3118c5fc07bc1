"""Through the load balancer, the durable state one host makes is whole on the other: a session whose turns ran
on both hosts (their clocks 8 s apart) is answered turn after turn, reverts and unreverts exactly (files
byte-equal) and diffs each turn; a worktree made on one host works from the other."""
import os
import subprocess
from pathlib import Path

from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.hosts.helpers import via
from tests.runner.conftest import text_prompt, wait_until

TURNS = {  # turn → (host it runs on, files it writes)
    1: ("a", {"one.txt": b"first\n", "README.md": b"hello\nfrom a\n"}),
    2: ("b", {"blob.bin": b"\x00\xff\x10binary\n", "one.txt": b"first\nsecond\n"}),
    3: ("a", {"three.txt": b"third\n", "README.md": b"hello\nfrom a\nand a again\n"}),
}


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the work tree (not .git), byte for byte."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath, name)
            files[str(path.relative_to(root))] = path.read_bytes()
    return files


def octal(data: bytes) -> str:
    return "".join(f"\\{byte:03o}" for byte in data)


def run_turn(persona, llm, session_id: str, turn: int) -> dict:
    host, files = TURNS[turn]
    command = "; ".join(f"printf '{octal(data)}' > {name}" for name, data in files.items()) + "; hostname"
    llm.script(Reply(tool_calls=[("bash", {"command": command, "description": f"turn {turn}"})]),
               Reply(text=f"turn {turn} done"))
    response = via(persona, host).post(f"/session/{session_id}/message", json=text_prompt(f"turn {turn}"))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["parts"] and any(p.get("text") == f"turn {turn} done" for p in answer["parts"]), answer
    wait_until(lambda: session_id not in persona.get("/session/status").json())
    return answer


def tool_output_of(persona, session_id: str, turn: int) -> str:
    for message in persona.get(f"/session/{session_id}/message").json():
        for part in message["parts"]:
            if part["type"] == "tool" and part["state"].get("input", {}).get("description") == f"turn {turn}":
                return part["state"].get("output", "")
    raise AssertionError(f"no tool part of turn {turn}")


def by_file(diffs: list[dict]) -> dict:
    return {d["file"]: d for d in diffs}


def test_a_session_whose_turns_ran_on_both_hosts_reverts_unreverts_and_diffs_exactly(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    repo = alice.repo
    session = via(alice, "a").post("/session", params={"directory": str(repo)}, json={}).json()
    sid = session["id"]
    states = {0: tree(repo)}
    for turn in TURNS:
        run_turn(alice, fake_llm, sid, turn)
        states[turn] = tree(repo)
        assert f"host-{TURNS[turn][0]}" in tool_output_of(alice, sid, turn)  # the turn ran on that host
    messages = alice.get(f"/session/{sid}/message").json()
    users = [m["info"]["id"] for m in messages if m["info"]["role"] == "user"]
    assert len(users) == 3 and users == sorted(users)
    assert [m["info"]["id"] for m in messages] == sorted(m["info"]["id"] for m in messages)

    # Each turn's diff, asked of the host that did not run it, then the whole session's.
    for turn, user_id in zip(TURNS, users):
        other = "b" if TURNS[turn][0] == "a" else "a"
        diffs = by_file(via(alice, other).get(f"/session/{sid}/diff", params={"messageID": user_id}).json())
        assert set(diffs) == set(TURNS[turn][1]), (turn, diffs)
        for name, diff in diffs.items():
            if name.endswith(".txt") or name == "README.md":
                assert diff["after"] == states[turn][name].decode()
                assert diff["before"] == states[turn - 1].get(name, b"").decode()
    whole = by_file(alice.get(f"/session/{sid}/diff").json())
    assert set(whole) == {"one.txt", "README.md", "blob.bin", "three.txt"}
    assert whole["README.md"]["before"] == "hello\n" and whole["README.md"]["after"] == states[3]["README.md"].decode()

    # Revert and unrevert on the host that did not take the snapshots.
    for turn, user_id in ((2, users[1]), (1, users[0]), (3, users[2])):
        other = "b" if TURNS[turn][0] == "a" else "a"
        reverted = via(alice, other).post(f"/session/{sid}/revert", json={"messageID": user_id})
        assert reverted.status_code == 200, reverted.text
        assert reverted.json()["revert"]["messageID"] == user_id
        assert tree(repo) == states[turn - 1], f"revert of turn {turn} on host {other}"
        unreverted = via(alice, TURNS[turn][0]).post(f"/session/{sid}/unrevert")
        assert unreverted.status_code == 200 and "revert" not in unreverted.json()
        assert tree(repo) == states[3], f"unrevert of turn {turn}"

    # A revert made on one host, then a prompt on the other: the reverted turn is gone, its edits too.
    assert via(alice, "b").post(f"/session/{sid}/revert", json={"messageID": users[1]}).status_code == 200
    assert tree(repo) == states[1]
    fake_llm.script(Reply(text="after the revert"))
    answer = via(alice, "a").post(f"/session/{sid}/message", json=text_prompt("again")).json()
    assert any(p.get("text") == "after the revert" for p in answer["parts"])
    wait_until(lambda: sid not in alice.get("/session/status").json())
    remaining = alice.get(f"/session/{sid}/message").json()
    remaining_users = [m["info"]["id"] for m in remaining if m["info"]["role"] == "user"]
    assert remaining_users[0] == users[0] and len(remaining_users) == 2
    assert not {users[1], users[2]} & {m["info"]["id"] for m in remaining}
    assert "revert" not in alice.get(f"/session/{sid}").json()
    assert tree(repo) == states[1]


def worktree_list(repo: Path) -> str:
    return subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def test_a_worktree_made_on_one_host_works_from_the_other(alice, bob, fake_llm):
    configure_fake_provider(alice, fake_llm)
    a, b = via(alice, "a"), via(alice, "b")
    params = {"directory": str(alice.repo)}
    made = a.post("/experimental/worktree", params=params, json={"name": "from a"})
    assert made.status_code == 200, made.text
    directory = made.json()["directory"]
    assert b.get("/experimental/worktree", params=params).json() == [directory]
    read = b.get("/file/content", params={"directory": directory, "path": "README.md"})
    assert read.status_code == 200, read.text
    assert read.json()["content"] == "hello\n"
    assert via(bob, "b").get("/file/content", params={"directory": directory, "path": "README.md"}).status_code \
        in (403, 404)

    # A sync on the other host keeps it; an agent turn on the other host works in it.
    assert b.post("/api/workspace/sync").status_code == 200
    workspaces = b.get("/api/workspace").json()
    listed = workspaces["data"] if isinstance(workspaces, dict) else workspaces
    assert directory in {w.get("directory") for w in listed}, listed
    assert directory in worktree_list(alice.repo)
    session = b.post("/session", params={"directory": directory}, json={}).json()
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "echo made-on-b > from-b.txt; git status --short",
                                                "description": "in the worktree"})]),
                    Reply(text="worked in the worktree"))
    answer = b.post(f"/session/{session['id']}/message", params={"directory": directory},
                    json=text_prompt("work here"))
    assert answer.status_code == 200, answer.text
    assert Path(directory, "from-b.txt").read_text() == "made-on-b\n"
    assert not (alice.repo / "from-b.txt").exists()

    removed = b.request("DELETE", "/experimental/worktree", params=params, json={"directory": directory})
    assert removed.status_code == 200 and removed.json() is True
    assert not os.path.exists(directory)
    assert directory not in worktree_list(alice.repo)
    assert a.get("/experimental/worktree", params=params).json() == []


def shared_dir_worktree(persona, tmp_path, host: str) -> tuple[dict, Path]:
    """A repository that is itself a root has no room beside it: its worktree goes to the server's shared dir
    (AGENTSERVER_SHARED_DIR)."""
    from auth_app.tokens import roots_add
    from tests.conftest import make_repo

    solo = make_repo(tmp_path / "solo", {"README.md": "solo\n"})
    roots_add(user=persona.user, path=str(solo))
    made = via(persona, host).post("/api/workspace", json={"type": "worktree", "directory": str(solo),
                                                           "name": "shared one"})
    assert made.status_code == 200, made.text
    return made.json(), solo


def test_a_worktree_the_server_keeps_in_the_shared_dir_works_from_the_other_host(alice, bob, hosts_up, tmp_path):
    a, b = via(alice, "a"), via(alice, "b")
    workspace, solo = shared_dir_worktree(alice, tmp_path, "a")
    directory = workspace["directory"]
    shared = hosts_up.hosts["a"].env["AGENTSERVER_SHARED_DIR"]
    assert directory.startswith(shared + os.sep) and workspace["createdByServer"] is True

    assert b.post("/api/workspace/sync").status_code == 200  # keeps it: host b sees the directory too
    assert b.get(f"/api/workspace/{workspace['id']}").json()["directory"] == directory
    assert directory in worktree_list(solo)
    vcs = b.get("/api/vcs", params={"workspace": workspace["id"]})  # git, on host b, in the worktree
    assert vcs.status_code == 200, vcs.text
    assert vcs.json()["branch"] == workspace["branch"]
    read = b.get("/api/fs/file", params={"workspace": workspace["id"], "path": "README.md"})
    assert read.status_code == 200, read.text
    assert "solo" in read.text
    assert via(bob, "b").get(f"/api/workspace/{workspace['id']}").status_code == 404
    session = b.post("/api/session", params={"workspace": workspace["id"]}, json={"title": "in the worktree"})
    assert session.status_code == 200, session.text
    assert session.json()["data"]["location"]["directory"] == directory

    removed = b.delete(f"/api/workspace/{workspace['id']}", params={"removeFiles": "true"})
    assert removed.status_code == 200, removed.text
    assert not os.path.exists(directory) and directory not in worktree_list(solo)
    assert a.get(f"/api/workspace/{workspace['id']}").status_code == 404


def test_an_agent_turn_on_the_other_host_works_in_a_shared_dir_worktree(alice, fake_llm, hosts_up, tmp_path):
    """Fails on one host as well (not a matter of hosts): the tools confine paths to the user's roots only
    (sessions_app/runtime/tools/base.py confine), so a server-made worktree outside them is "Access denied"."""
    configure_fake_provider(alice, fake_llm)
    workspace, _ = shared_dir_worktree(alice, tmp_path, "a")
    directory = workspace["directory"]
    b = via(alice, "b")
    sid = b.post("/api/session", params={"workspace": workspace["id"]}, json={"title": "t"}).json()["data"]["id"]
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "cat README.md > seen.txt; hostname",
                                                "description": "shared worktree"})]),
                    Reply(text="done in the shared worktree"))
    answer = b.post(f"/session/{sid}/message", json=text_prompt("work there"))
    assert answer.status_code == 200, answer.text
    tools = [p["state"] for m in b.get(f"/session/{sid}/message").json() for p in m["parts"] if p["type"] == "tool"]
    assert Path(directory, "seen.txt").exists(), tools
    assert Path(directory, "seen.txt").read_text() == "solo\n"
    assert "host-b" in tools[0]["output"]
