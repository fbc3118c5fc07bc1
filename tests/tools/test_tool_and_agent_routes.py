from projects_app.models import UserConfig


def test_anonymous_callers_get_401(anon):
    for url in ("/experimental/tool/ids", "/experimental/tool?provider=p&model=m", "/agent", "/api/agent"):
        assert anon.get(url).status_code == 401, url


def test_tool_ids_lists_every_tool(alice):
    ids = alice.get("/experimental/tool/ids").json()
    assert ids[:5] == ["invalid", "question", "bash", "read", "glob"]
    assert {"edit", "write", "apply_patch", "task", "webfetch", "todowrite", "skill", "list", "todoread"} <= set(ids)


def test_tool_list_needs_provider_and_model(alice):
    response = alice.get("/experimental/tool?provider=mock")
    assert response.status_code == 400
    assert response.json()["data"]["kind"] == "Query"
    assert alice.get("/experimental/tool").status_code == 400


def test_tool_list_gives_json_schemas_per_model_family(alice):
    tools = alice.get("/experimental/tool", params={"provider": "mock", "model": "mock-model"}).json()
    by_id = {t["id"]: t for t in tools}
    assert list(by_id)[:3] == ["invalid", "question", "bash"]
    assert "edit" in by_id and "apply_patch" not in by_id and "list" not in by_id
    assert by_id["invalid"] == {"id": "invalid", "description": "Do not use", "parameters": {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"tool": {"type": "string"}, "error": {"type": "string"}}, "required": ["tool", "error"]}}
    assert by_id["read"]["parameters"]["required"] == ["filePath"]
    gpt = {t["id"] for t in alice.get("/experimental/tool", params={"provider": "openai", "model": "gpt-5"}).json()}
    assert "apply_patch" in gpt and "edit" not in gpt


def test_agent_lists_builtins_with_the_default_first(alice):
    agents = alice.get("/agent").json()
    assert [a["name"] for a in agents] == ["build", "compaction", "explore", "general", "plan", "summary", "title"]
    build = agents[0]
    assert build["mode"] == "primary" and build["native"] is True and build["options"] == {}
    assert build["permission"][:3] == [{"permission": "*", "pattern": "*", "action": "allow"},
                                       {"permission": "doom_loop", "pattern": "*", "action": "ask"},
                                       {"permission": "external_directory", "pattern": "*", "action": "ask"}]
    assert next(a for a in agents if a["name"] == "title")["hidden"] is True


def test_config_defined_agents_appear(alice):
    UserConfig.objects.create(user=alice.user, data={
        "agent": {"reviewer": {"description": "Reviews code", "model": "fake/fake-model", "temperature": 0.1,
                               "tools": {"bash": False}, "steps": 5},
                  "general": {"disable": True}},
        "mode": {"focus": {"prompt": "Focus."}},
    })
    agents = {a["name"]: a for a in alice.get("/agent").json()}
    assert "general" not in agents
    reviewer = agents["reviewer"]
    assert reviewer["mode"] == "all" and reviewer["native"] is False
    assert reviewer["model"] == {"providerID": "fake", "modelID": "fake-model"}
    assert reviewer["temperature"] == 0.1 and reviewer["steps"] == 5
    assert reviewer["permission"][-1] == {"permission": "bash", "pattern": "*", "action": "deny"}
    assert agents["focus"]["mode"] == "primary" and agents["focus"]["prompt"] == "Focus."


def test_v2_agent_list_wraps_agents_with_their_location(alice):
    body = alice.get("/api/agent", params={"directory": str(alice.repo)}).json()
    assert body["location"]["directory"] == str(alice.repo)
    assert body["location"]["project"]["directory"] == str(alice.repo)
    assert [a["id"] for a in body["data"]][:3] == ["build", "plan", "general"]
    assert body["data"][0]["permissions"][0] == {"action": "*", "resource": "*", "effect": "allow"}
