"""opencode 1.18's /experimental/worktree (worktree.list/create/remove/reset) over the workspace services."""
import os

from tests.events.sse_client import open_stream
from tests.workspaces.helpers import git, worktree_list


def create(persona, **body):
    response = persona.post("/experimental/worktree", params={"directory": str(persona.repo)}, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_create_list_remove(alice):
    made = create(alice, name="feature one")
    assert made == {"name": "feature-one", "branch": "opencode/feature-one", "directory": made["directory"]}
    assert os.path.isfile(os.path.join(made["directory"], "README.md"))
    assert git(made["directory"], "rev-parse", "--abbrev-ref", "HEAD") == "opencode/feature-one"
    listed = alice.get("/experimental/worktree", params={"directory": str(alice.repo)})
    assert listed.status_code == 200 and listed.json() == [made["directory"]]
    # The same worktree is a workspace of the project (what workspace.* routes see).
    from projects_app.models import Workspace

    assert Workspace.objects.filter(owner=alice.user, directory=made["directory"], type="worktree").exists()
    removed = alice.client.request("DELETE", "/experimental/worktree", params={"directory": str(alice.repo)},
                            json={"directory": made["directory"]})
    assert removed.status_code == 200 and removed.json() is True
    assert not os.path.exists(made["directory"])
    assert made["directory"] not in worktree_list(alice.repo)
    assert alice.get("/experimental/worktree", params={"directory": str(alice.repo)}).json() == []


def test_create_without_a_name_and_the_start_command_reports_ready(alice):
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        made = create(alice, startCommand="echo started > started.txt")
        frame, _ = stream.until(lambda d: d.get("payload", {}).get("type") in ("worktree.ready", "worktree.failed"))
    assert frame.data["payload"]["type"] == "worktree.ready", frame.data
    assert frame.data["payload"]["properties"]["name"] == made["name"]
    assert (open(os.path.join(made["directory"], "started.txt")).read()) == "started\n"


def test_a_failing_start_command_reports_failed(alice):
    with open_stream(alice, "/global/event") as stream:
        stream.next()
        create(alice, name="broken", startCommand="exit 3")
        frame, _ = stream.until(lambda d: d.get("payload", {}).get("type") in ("worktree.ready", "worktree.failed"))
    assert frame.data["payload"]["type"] == "worktree.failed"
    assert "exit 3" in frame.data["payload"]["properties"]["message"]


def test_reset_puts_the_worktree_back_at_the_main_head(alice):
    made = create(alice, name="resettable")
    directory = made["directory"]
    with open(os.path.join(directory, "README.md"), "w") as handle:
        handle.write("changed\n")
    with open(os.path.join(directory, "scratch.txt"), "w") as handle:
        handle.write("junk\n")
    git(directory, "add", "README.md")
    git(directory, "commit", "-q", "-m", "local change")
    response = alice.post("/experimental/worktree/reset", params={"directory": str(alice.repo)},
                          json={"directory": directory})
    assert response.status_code == 200 and response.json() is True
    assert open(os.path.join(directory, "README.md")).read() == "hello\n"
    assert not os.path.exists(os.path.join(directory, "scratch.txt"))
    assert git(directory, "rev-parse", "HEAD") == git(alice.repo, "rev-parse", "HEAD")


def test_bad_input_is_400_and_creates_nothing(alice):
    params = {"directory": str(alice.repo)}
    for body, field in (({"name": 5}, "name"), ({"startCommand": ["ls"]}, "startCommand")):
        response = alice.post("/experimental/worktree", params=params, json=body)
        assert response.status_code == 400 and field in response.json()["data"]["message"], body
    missing = alice.post("/experimental/worktree/reset", params=params, json={})
    assert missing.status_code == 400 and "directory" in missing.json()["data"]["message"]
    assert alice.get("/experimental/worktree", params=params).json() == []
    plain = alice.root / "plain"
    plain.mkdir()
    not_git = alice.post("/experimental/worktree", params={"directory": str(plain)}, json={})
    assert not_git.status_code == 409 and not_git.json()["name"] == "WorktreeNotGitError"


def test_unknown_and_foreign_worktrees_are_404(alice, bob):
    made = create(alice, name="mine")
    for persona, params in ((alice, {"directory": str(alice.repo)}), (bob, {"directory": str(bob.repo)})):
        unknown = persona.client.request("DELETE", "/experimental/worktree", params=params,
                                  json={"directory": str(alice.repo)})
        assert unknown.status_code == 404
        foreign = persona.post("/experimental/worktree/reset", params=params, json={"directory": made["directory"]})
        assert foreign.status_code == 404 if persona is bob else foreign.status_code in (200, 404)
    assert bob.get("/experimental/worktree", params={"directory": str(bob.repo)}).json() == []
    gone = bob.client.request("DELETE", "/experimental/worktree", params={"directory": str(bob.repo)},
                       json={"directory": made["directory"]})
    assert gone.status_code == 404
    assert os.path.isdir(made["directory"])


def test_anonymous_callers_are_refused(anon):
    assert anon.get("/experimental/worktree").status_code == 401
    assert anon.post("/experimental/worktree", json={}).status_code == 401
    assert anon.request("DELETE", "/experimental/worktree", json={"directory": "/"}).status_code == 401
    assert anon.post("/experimental/worktree/reset", json={"directory": "/"}).status_code == 401
