"""global.config.get/update (the user's global layer), global.dispose, app.log, project.initGit, and the
spec's `{config: {...}}` envelope on PATCH /api/config."""
import os
import subprocess

from projects_app.config import REDACTED
from tests.events.sse_client import open_stream


def test_global_config_is_the_users_own_layer_every_project_sees(alice, bob):
    response = alice.patch("/global/config", json={"model": "g/one", "agent": {"build": {"temperature": 0.3}}})
    assert response.status_code == 200, response.text
    assert response.json()["model"] == "g/one" and response.json()["username"] == "alice"
    assert alice.get("/global/config").json()["agent"] == {"build": {"temperature": 0.3}}
    # The layer sits under every project of alice's, and nobody else's.
    assert alice.get("/config", params={"directory": str(alice.repo)}).json()["model"] == "g/one"
    assert alice.get("/config", params={"directory": str(alice.root)}).json()["model"] == "g/one"
    assert "model" not in bob.get("/global/config").json()
    assert "model" not in bob.get("/config", params={"directory": str(bob.repo)}).json()
    # A project override still wins over it; null removes the global key.
    alice.patch("/config", params={"directory": str(alice.repo)}, json={"model": "p/two"})
    assert alice.get("/config", params={"directory": str(alice.repo)}).json()["model"] == "p/two"
    assert "model" not in alice.patch("/global/config", json={"model": None}).json()


def test_global_config_secrets_are_stored_sealed_and_never_echoed(alice):
    from projects_app.models import UserConfig

    body = {"provider": {"acme": {"options": {"apiKey": "sk-global-secret-123456"}}}}
    response = alice.patch("/global/config", json=body)
    assert response.status_code == 200
    assert response.json()["provider"]["acme"]["options"]["apiKey"] == REDACTED
    assert "sk-global-secret" not in str(UserConfig.objects.get(user=alice.user).data)
    assert "sk-global-secret" not in alice.get("/global/config").text


def test_global_config_rejects_bad_input_and_stores_nothing(alice):
    from projects_app.models import UserConfig

    for body in ({"model": 5}, {"agent": "x"}, ["model"]):
        response = alice.patch("/global/config", json=body)
        assert response.status_code == 400, body
        assert response.json()["name"] == "BadRequestError"
    assert not UserConfig.objects.filter(user=alice.user).exclude(data={}).exists()
    bad = alice.patch("/global/config", json={"model": 5})
    assert bad.json()["data"]["issues"][0]["path"] == ["model"]


def test_v2_config_update_takes_the_specs_envelope_and_the_bare_config(alice):
    directory = {"directory": str(alice.repo)}
    enveloped = alice.patch("/api/config", params=directory, json={"config": {"model": "spec/form"}})
    assert enveloped.status_code == 200, enveloped.text
    assert enveloped.json()["model"] == "spec/form" and "config" not in enveloped.json()
    bare = alice.patch("/api/config", params=directory, json={"small_model": "bare/form"})
    assert bare.json()["small_model"] == "bare/form" and bare.json()["model"] == "spec/form"
    assert "config" not in alice.get("/api/config", params=directory).json()
    wrong = alice.patch("/api/config", params=directory, json={"config": "model=x"})
    assert wrong.status_code == 400 and "config" in wrong.json()["data"]["message"]
    invalid = alice.patch("/api/config", params=directory, json={"config": {"model": 5}})
    assert invalid.status_code == 400 and invalid.json()["data"]["issues"][0]["path"] == ["model"]
    assert alice.get("/api/config", params=directory).json()["model"] == "spec/form"


def test_global_dispose_tells_the_callers_global_stream_only(alice, bob):
    with open_stream(alice, "/global/event") as alice_stream, open_stream(bob, "/global/event") as bob_stream:
        alice_stream.next()
        bob_stream.next()
        response = alice.post("/global/dispose")
        assert response.status_code == 200 and response.json() is True
        frame, _ = alice_stream.until(lambda d: d.get("payload", {}).get("type") == "global.disposed")
        assert frame.data["directory"] == "global" and frame.data["payload"]["properties"] == {}
        bob.post("/instance/dispose", params={"directory": str(bob.repo)})
        frame, before = bob_stream.until(lambda d: d.get("payload", {}).get("type") == "server.instance.disposed")
        assert all(f.data.get("payload", {}).get("type") != "global.disposed" for f in before)


def test_app_log_writes_the_line_to_the_server_log(alice, server):
    response = alice.post("/log", json={"service": "tui", "level": "warn", "message": "hello from the client",
                                        "extra": {"n": 1}})
    assert response.status_code == 200 and response.json() is True
    import time

    deadline = time.monotonic() + 10
    while "hello from the client" not in server.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "[alice] tui: hello from the client" in server.log()


def test_app_log_rejects_bad_input(alice):
    for body, field in (({"service": "tui", "level": "loud", "message": "x"}, "level"),
                        ({"level": "info", "message": "x"}, "service"),
                        ({"service": "tui", "level": "info"}, "message"),
                        ({"service": "tui", "level": "info", "message": "x", "extra": [1]}, "extra")):
        response = alice.post("/log", json=body)
        assert response.status_code == 400, body
        assert field in response.json()["data"]["message"]


def test_git_init_makes_a_directory_a_project_of_its_own(alice):
    plain = alice.root / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("x\n")
    before = alice.get("/project/current", params={"directory": str(plain)}).json()
    assert before["id"] == "global"
    response = alice.post("/project/git/init", params={"directory": str(plain)})
    assert response.status_code == 200, response.text
    project = response.json()
    root_commit = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=plain, capture_output=True,
                                 text=True, check=True).stdout.strip()
    assert project["id"] == root_commit and project["vcs"] == "git"
    assert project["worktree"] == os.path.realpath(plain)
    assert alice.get("/project/current", params={"directory": str(plain)}).json()["id"] == root_commit
    # Already a repository: nothing changes.
    again = alice.post("/project/git/init", params={"directory": str(plain)}).json()
    assert again["id"] == root_commit
    assert subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=plain, capture_output=True, text=True,
                          check=True).stdout.strip() == "1"


def test_git_init_outside_the_callers_roots_is_refused(alice, bob):
    plain = alice.root / "plain2"
    plain.mkdir()
    response = bob.post("/project/git/init", params={"directory": str(plain)})
    assert response.status_code in (403, 404)
    assert not (plain / ".git").exists()


def test_anonymous_callers_are_refused(anon):
    for method, url in (("GET", "/global/config"), ("PATCH", "/global/config"), ("POST", "/global/dispose"),
                        ("POST", "/log"), ("POST", "/project/git/init")):
        assert anon.request(method, url, json={}).status_code == 401
