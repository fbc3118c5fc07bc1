"""GET /provider, /config/providers, /api/provider, /api/model for a user: catalog + config overlay,
connected providers, and never a secret in a response."""
from projects_app.models import UserConfig
from tests.fakes.fixtures import FAKE_KEY, configure_fake_provider

SECRET = "sk-live-secret-do-not-leak-42"


def set_config(persona, data: dict) -> None:
    UserConfig.objects.update_or_create(user=persona.user, defaults={"data": data})


def by_id(providers: list) -> dict:
    return {p["id"]: p for p in providers}


def test_it_lists_the_whole_catalog_with_defaults(alice):
    response = alice.get("/provider")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"all", "default", "connected"}
    providers = by_id(body["all"])
    assert len(providers) > 100
    assert set(providers["anthropic"]) >= {"id", "name", "env", "models", "npm"}
    assert body["default"]["anthropic"] in providers["anthropic"]["models"]
    assert body["connected"] == []


def test_connected_changes_when_a_key_appears_in_the_config(alice):
    assert "openai" not in alice.get("/provider").json()["connected"]
    assert alice.get("/config/providers").json()["providers"] == []
    set_config(alice, {"provider": {"openai": {"options": {"apiKey": SECRET}}}})
    body = alice.get("/provider").json()
    assert body["connected"] == ["openai"]
    config_providers = alice.get("/config/providers").json()
    assert [p["id"] for p in config_providers["providers"]] == ["openai"]
    assert config_providers["default"]["openai"] in config_providers["providers"][0]["models"]


def test_connected_follows_the_active_auth_account(alice, bob):
    from auth_app import accounts

    accounts.account_create(user=alice.user, service_id="anthropic", credential={"type": "api", "key": SECRET})
    assert alice.get("/provider").json()["connected"] == ["anthropic"]
    assert bob.get("/provider").json()["connected"] == []
    source = alice.get("/config/providers").json()["providers"][0]["source"]
    assert source == "api"


def test_config_providers_uses_the_internal_shape_with_capabilities(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    body = alice.get("/config/providers").json()
    fake = by_id(body["providers"])["fake"]
    assert fake["source"] == "config" and fake["name"] == "Fake LLM"
    model = fake["models"]["fake-model"]
    assert model["providerID"] == "fake"
    assert model["api"] == {"id": "fake-model", "url": "", "npm": "@ai-sdk/openai-compatible"}
    assert model["capabilities"]["toolcall"] is True and model["capabilities"]["reasoning"] is True
    assert model["capabilities"]["input"]["text"] is True
    assert model["cost"] == {"input": 1.0, "output": 2.0, "cache": {"read": 0.5, "write": 1.25}}
    assert model["limit"] == {"context": 128000, "output": 4096}
    assert model["status"] == "active"
    assert body["default"]["fake"] == "fake-model"


def test_config_overlay_adds_custom_providers_and_models_and_disables_providers(alice):
    set_config(alice, {
        "provider": {
            "local": {"name": "Local vLLM", "options": {"baseURL": "http://127.0.0.1:9/v1"},
                      "models": {"qwen": {"name": "Qwen", "limit": {"context": 32000, "output": 2000}}}},
            "anthropic": {"models": {"my-claude": {"name": "My Claude", "id": "claude-sonnet-4-5"}}},
        },
        "disabled_providers": ["openai"],
    })
    providers = by_id(alice.get("/provider").json()["all"])
    assert "openai" not in providers
    local = providers["local"]
    assert local["name"] == "Local vLLM" and local["npm"] == "@ai-sdk/openai-compatible"
    assert local["models"]["qwen"]["limit"] == {"context": 32000, "output": 2000}
    assert "my-claude" in providers["anthropic"]["models"] and "claude-sonnet-4-5" in providers["anthropic"]["models"]
    # A keyless local endpoint is usable, so it is connected.
    assert alice.get("/provider").json()["connected"] == ["local"]


def test_enabled_providers_keeps_only_those(alice):
    set_config(alice, {"enabled_providers": ["anthropic", "openai"]})
    assert sorted(p["id"] for p in alice.get("/provider").json()["all"]) == ["anthropic", "openai"]


def test_secrets_from_config_never_appear_in_responses(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    data = UserConfig.objects.get(user=alice.user).data
    data["provider"]["openai"] = {"options": {"apiKey": SECRET, "headers": {"Authorization": f"Bearer {SECRET}"}},
                                  "models": {"gpt-4o": {"headers": {"x-api-key": SECRET}}}}
    set_config(alice, data)
    for url in ("/provider", "/config/providers", "/config", "/api/provider", "/api/model", "/api/config"):
        response = alice.get(url)
        assert response.status_code == 200, url
        assert SECRET not in response.text, url
        assert FAKE_KEY not in response.text, url


def test_v2_provider_and_model_lists(alice, fake_llm):
    configure_fake_provider(alice, fake_llm, protocol="anthropic")
    body = alice.get("/api/provider", params={"directory": str(alice.repo)}).json()
    assert body["location"]["directory"] == str(alice.repo)
    fake = by_id(body["data"])["fake"]
    assert fake["api"] == {"type": "aisdk", "package": "@ai-sdk/anthropic", "url": fake_llm.base_url}
    models = alice.get("/api/model").json()["data"]
    model = next(m for m in models if m["providerID"] == "fake")
    assert model["id"] == "fake-model" and model["capabilities"]["tools"] is True
    assert model["cost"][0]["input"] == 1.0 and model["enabled"] is True


def test_routes_require_authentication(anon):
    for url in ("/provider", "/config/providers", "/provider/auth", "/api/provider", "/api/model"):
        assert anon.get(url).status_code == 401, url
    assert anon.post("/provider/openai/oauth/authorize", json={"method": 0}).status_code == 401
    assert anon.post("/provider/openai/oauth/callback", json={"method": 0, "code": "x"}).status_code == 401


def test_one_users_config_does_not_change_another_users_providers(alice, bob, fake_llm):
    configure_fake_provider(alice, fake_llm)
    assert "fake" not in by_id(bob.get("/provider").json()["all"])
    assert bob.get("/config/providers").json() == {"providers": [], "default": {}}
