"""config.get / config.update: the layers, validation, per-user overrides, redaction of secrets."""
import json

from projects_app.config import REDACTED


def set_user_config(persona, data: dict) -> None:
    from projects_app.models import UserConfig

    UserConfig.objects.update_or_create(user=persona.user, defaults={"data": data})


def test_config_has_the_defaults_of_opencode(alice):
    response = alice.get("/config")
    assert response.status_code == 200
    body = response.json()
    assert body["agent"] == {} and body["mode"] == {} and body["command"] == {} and body["plugin"] == []
    assert body["username"] == "alice"


def test_layers_merge_user_then_project_files_then_overrides(alice):
    set_user_config(alice, {"model": "u/one", "share": "auto", "agent": {"build": {"temperature": 0.1}}})
    (alice.repo / "opencode.jsonc").write_text(
        '{\n  // project file\n  "model": "p/two",\n  "agent": {"build": {"prompt": "hi",},},\n}\n')
    sub = alice.repo / "pkg"
    sub.mkdir()
    (sub / "opencode.json").write_text(json.dumps({"small_model": "p/small"}))
    body = alice.get("/config", params={"directory": str(sub)}).json()
    assert body["model"] == "p/two"
    assert body["small_model"] == "p/small"
    assert body["share"] == "auto"
    assert body["agent"]["build"] == {"temperature": 0.1, "prompt": "hi"}
    # The nearer file wins over the worktree root's.
    (sub / "opencode.json").write_text(json.dumps({"model": "near/est"}))
    assert alice.get("/config", params={"directory": str(sub)}).json()["model"] == "near/est"
    assert alice.get("/config", params={"directory": str(alice.repo)}).json()["model"] == "p/two"


def test_update_merges_into_the_callers_project_overrides(alice, bob):
    directory = {"directory": str(alice.repo)}
    response = alice.patch("/config", params=directory, json={"model": "a/b", "agent": {"plan": {"temperature": 1}}})
    assert response.status_code == 200, response.text
    assert response.json()["model"] == "a/b"
    second = alice.patch("/config", params=directory, json={"agent": {"plan": {"prompt": "p"}}, "custom_key": 1})
    assert second.json()["agent"]["plan"] == {"temperature": 1, "prompt": "p"}
    assert second.json()["custom_key"] == 1
    assert alice.get("/config", params=directory).json()["model"] == "a/b"
    assert alice.get("/api/config", params=directory).json()["model"] == "a/b"
    # Only that project: alice's default (non-git) directory and bob see nothing of it.
    assert "model" not in alice.get("/config").json()
    assert "model" not in bob.get("/config", params={"directory": str(bob.repo)}).json()
    # null removes an override.
    assert "model" not in alice.patch("/api/config", params=directory, json={"model": None}).json()


def test_update_rejects_wrong_types_with_issues(alice):
    for body, path in [
        ({"model": 5}, ["model"]),
        ({"model": "no-slash"}, ["model"]),
        ({"agent": "x"}, ["agent"]),
        ({"agent": {"build": {"temperature": "hot"}}}, ["agent", "build", "temperature"]),
        ({"share": "sometimes"}, ["share"]),
        ({"permission": {"edit": "maybe"}}, ["permission", "edit"]),
        ({"permission": {"bash": {"rm *": "nope"}}}, ["permission", "bash", "rm *"]),
        ({"plugin": "x"}, ["plugin"]),
        ({"mcp": {"s": {"type": "local"}}}, ["mcp", "s", "command"]),
    ]:
        response = alice.patch("/config", json=body)
        assert response.status_code == 400, body
        error = response.json()
        assert error["name"] == "BadRequestError"
        assert path in [issue["path"] for issue in error["data"]["issues"]], (body, error)
    assert alice.patch("/config", json=["not", "an", "object"]).status_code == 400
    assert alice.patch("/api/config", json={"model": 5}).status_code == 400


def test_permission_accepts_an_action_or_a_map(alice):
    assert alice.patch("/config", json={"permission": "allow"}).status_code == 200
    body = {"permission": {"edit": "ask", "bash": {"git *": "allow", "*": "ask"}}}
    assert alice.patch("/config", json=body).json()["permission"]["bash"] == {"git *": "allow", "*": "ask"}


def test_secrets_are_never_echoed(alice):
    set_user_config(alice, {"provider": {"openai": {"options": {"apiKey": "sk-user-secret", "baseURL": "http://x"}}}})
    (alice.repo / "opencode.json").write_text(json.dumps({"mcp": {"r": {
        "type": "remote", "url": "http://m", "headers": {"Authorization": "Bearer file-secret"}}}}))
    directory = {"directory": str(alice.repo)}
    response = alice.patch("/config", params=directory, json={"provider": {"anthropic": {"options": {
        "apiKey": "sk-patch-secret"}}}, "x": {"client_secret": "c", "password": "p", "token": "t"}})
    assert response.status_code == 200
    for text in (response.text, alice.get("/config", params=directory).text,
                 alice.get("/api/config", params=directory).text):
        for secret in ("sk-user-secret", "sk-patch-secret", "file-secret", '"c"', '"p"', '"t"'):
            assert secret not in text
    body = alice.get("/config", params=directory).json()
    assert body["provider"]["openai"]["options"] == {"apiKey": REDACTED, "baseURL": "http://x"}
    assert body["provider"]["anthropic"]["options"]["apiKey"] == REDACTED


def test_a_symlinked_config_file_leading_outside_is_ignored(alice, tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"model": "evil/model"}))
    (alice.repo / "opencode.json").symlink_to(outside)
    assert "model" not in alice.get("/config", params={"directory": str(alice.repo)}).json()


def test_a_broken_config_file_does_not_break_the_route(alice):
    (alice.repo / "opencode.json").write_text("{ not json")
    assert alice.get("/config", params={"directory": str(alice.repo)}).status_code == 200


def test_secrets_written_by_patch_are_encrypted_at_rest_and_still_used(alice):
    from projects_app.config import effective_config
    from projects_app.contexts import context_for_directory
    from projects_app.models import Project

    directory = {"directory": str(alice.repo)}
    alice.patch("/config", params=directory, json={"provider": {"p": {"options": {"apiKey": "sk-at-rest"}}}})
    project = Project.objects.get(owner=alice.user, project_id=alice.get("/project/current", params=directory).json()["id"])
    assert "sk-at-rest" not in json.dumps(project.config)
    context = context_for_directory(alice.user, str(alice.repo))
    assert effective_config(context)["provider"]["p"]["options"]["apiKey"] == "sk-at-rest"
