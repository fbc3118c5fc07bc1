"""Every way the server starts a program for bob runs it in bob's sandbox: session.shell, the bash tool, a PTY,
a local MCP server, a command template's !`…` expansion, and the git the server runs in his repository
(vcs.status, vcs.diff, file.status, project detection, snapshots) with a hostile core.fsmonitor hook and a
.gitattributes clean filter. alice's features keep working beside him."""
import subprocess
import sys

from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.pty.conftest import Screen, create_pty, open_socket
from tests.runner.conftest import wait_until
from tests.sandbox.conftest import assert_confined, write_hook
from tests.tools.harness import Workspace, run_tool

FAKE_MCP = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


def _session(persona) -> dict:
    response = persona.post("/session", params={"directory": str(persona.repo)}, json={})
    assert response.status_code == 200, response.text
    return response.json()


def test_session_shell_is_confined(alice, bob, fake_llm, probe):
    configure_fake_provider(bob, fake_llm)
    session = _session(bob)
    response = bob.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": probe("shell")})
    assert response.status_code == 200, response.text
    assert_confined(response.json()["parts"][0]["state"]["output"], alice=alice, bob=bob, tag="shell")


async def test_the_bash_tool_is_confined(alice, bob, probe):
    from asgiref.sync import sync_to_async

    from projects_app.contexts import context_for_directory
    from sessions_app.store.sessions import session_create

    def workspace():
        context = context_for_directory(bob.user, str(bob.repo))
        return Workspace(user=bob.user, root=bob.root, repo=bob.repo, context=context,
                         session=session_create(context=context))

    ws = await sync_to_async(workspace)()
    # In a script: the tool's own check refuses paths outside the roots written on the command line, and the
    # sandbox must hold even when the paths are hidden from that check.
    (bob.root / "bash-probe.sh").write_text(probe("bash"))
    result = await run_tool(ws, "bash", {"command": "bash ../bash-probe.sh"})
    assert_confined(result.output, alice=alice, bob=bob, tag="bash")


async def test_a_pty_is_confined(alice, bob, probe):
    pty = create_pty(bob, command="/bin/bash", args=["-c", probe("pty") + "\nexec cat"])
    try:
        async with open_socket(bob, pty["id"], cursor=0) as ws:
            text = await Screen(ws).expect("PROBE-END")
    finally:
        bob.delete(f"/pty/{pty['id']}")
    assert_confined(text.replace("\r", ""), alice=alice, bob=bob, tag="pty")


def test_a_local_mcp_server_is_confined(alice, bob, probe):
    marker = bob.root / "mcp-probe.txt"
    script = f"(\n{probe('mcp')}\n) > {marker} 2>&1\nexec {sys.executable} {FAKE_MCP}"
    config = {"type": "local", "command": "/bin/bash", "arguments": ["-c", script]}
    response = bob.post("/api/mcp/server", params={"directory": str(bob.repo)},
                        json={"name": "probe", "config": config})
    assert response.status_code == 200, response.text
    wait_until(lambda: marker.exists() and "PROBE-END" in marker.read_text())
    assert_confined(marker.read_text(), alice=alice, bob=bob, tag="mcp")


def test_a_command_template_expansion_is_confined(alice, bob, probe):
    from projects_app.contexts import context_for_directory
    from sessions_app.runtime.command_template import expand

    context = context_for_directory(bob.user, str(bob.repo))
    script = probe("template").replace("`", "")
    (bob.root / "template-probe.sh").write_text(script)
    parts = expand(f"Result: !`bash {bob.root}/template-probe.sh`", "", context=context, roots=[str(bob.root)],
                   agent_names=set())
    assert_confined(parts[0]["text"], alice=alice, bob=bob, tag="template")


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_git_of_vcs_and_file_status_runs_bobs_fsmonitor_hook_in_his_sandbox(alice, bob, probe):
    for route, tag in (("/api/vcs/status", "vcsstatus"), ("/api/vcs/diff", "vcsdiff"), ("/file/status", "filestatus")):
        marker = bob.root / f"{tag}.txt"
        hook = write_hook(bob, probe(tag), marker)
        _git(bob.repo, "config", "core.fsmonitor", str(hook))
        (bob.repo / "README.md").write_text(f"changed for {tag}\n")
        response = bob.get(route, params={"directory": str(bob.repo)})
        assert response.status_code == 200, response.text
        assert marker.exists(), f"{route}: the hook did not run"
        assert_confined(marker.read_text(), alice=alice, bob=bob, tag=tag)
    listed = bob.get("/api/vcs/status", params={"directory": str(bob.repo)}).json()["data"]
    assert any(entry["path"] == "README.md" for entry in listed)


def test_a_clean_filter_in_bobs_repository_runs_in_his_sandbox(alice, bob, probe):
    marker = bob.root / "filter.txt"
    hook = write_hook(bob, probe("filter"), marker)
    (bob.repo / ".gitattributes").write_text("*.txt filter=probe\n")
    (bob.repo / "notes.txt").write_text("bob's notes\n")
    _git(bob.repo, "add", ".gitattributes", "notes.txt")
    _git(bob.repo, "-c", "user.name=bob", "-c", "user.email=bob@localhost", "commit", "-qm", "notes")
    _git(bob.repo, "config", "filter.probe.clean", str(hook))
    (bob.repo / "notes.txt").write_text("bob's notes, changed\n")
    response = bob.get("/api/vcs/diff", params={"directory": str(bob.repo)})
    assert response.status_code == 200, response.text
    assert marker.exists(), "the clean filter did not run"
    assert_confined(marker.read_text(), alice=alice, bob=bob, tag="filter")


def test_project_detection_and_snapshots_run_git_in_bobs_sandbox(alice, bob, fake_llm, probe):
    project = bob.get("/project/current", params={"directory": str(bob.repo)})
    assert project.status_code == 200, project.text
    assert project.json()["worktree"] == str(bob.repo)  # detected by git in his sandbox

    # The snapshot repository is the server's, but its git reads bob's own global config (his sandbox HOME),
    # which he controls from his shell: a clean filter there runs for the snapshot's `git add`.
    configure_fake_provider(bob, fake_llm)
    session = _session(bob)
    marker = bob.root / "snapshot.txt"
    hook = write_hook(bob, probe("snapshot"), marker)
    setup = f"git config --global filter.probe.clean {hook} && echo '*.txt filter=probe' > .gitattributes"
    assert bob.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": setup}).status_code == 200
    (bob.repo / "notes.txt").write_text("bob's notes\n")
    fake_llm.script(Reply(text="done"))
    response = bob.post(f"/session/{session['id']}/message", json={"parts": [{"type": "text", "text": "hi"}]})
    assert response.status_code == 200, response.text
    wait_until(lambda: marker.exists() and "PROBE-END" in marker.read_text())
    assert_confined(marker.read_text(), alice=alice, bob=bob, tag="snapshot")


def test_alices_features_keep_working_beside_bob(alice, bob, fake_llm):
    configure_fake_provider(alice, fake_llm)
    session = _session(alice)
    response = alice.post(f"/session/{session['id']}/shell",
                          json={"agent": "build", "command": "echo hers > hers.txt && cat hers.txt && git status -s"})
    assert response.status_code == 200, response.text
    output = response.json()["parts"][0]["state"]["output"]
    assert "hers" in output and "?? hers.txt" in output
    assert (alice.repo / "hers.txt").read_text() == "hers\n"
    status = alice.get("/api/vcs/status", params={"directory": str(alice.repo)}).json()["data"]
    assert [entry["path"] for entry in status] == ["hers.txt"]
    content = alice.get("/file/content", params={"directory": str(alice.repo), "path": "hers.txt"})
    assert content.status_code == 200 and "hers" in content.text
