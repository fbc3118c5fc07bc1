"""The models.dev catalog loads offline from the pinned snapshot and answers the catalog routes."""
import socket

import pytest

from providers_app import catalog


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a non-local connection fails the test."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost") and not str(host).startswith("/"):
            raise AssertionError(f"network access to {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.delenv("AGENTSERVER_CATALOG", raising=False)
    catalog.catalog.cache_clear()
    yield
    catalog.catalog.cache_clear()


def test_it_loads_the_catalog_without_network(no_network):
    data = catalog.catalog()
    assert len(data) > 100
    openai = data["openai"]
    assert openai["env"] == ["OPENAI_API_KEY"] and openai["npm"] == "@ai-sdk/openai"
    model = openai["models"]["gpt-4o"]
    for key in ("id", "name", "release_date", "attachment", "reasoning", "temperature", "tool_call", "limit",
                "options"):
        assert key in model
    assert set(model["limit"]) >= {"context", "output"}
    assert model["cost"]["input"] > 0


def test_every_model_has_the_spec_fields(no_network):
    for provider in catalog.catalog().values():
        assert {"id", "name", "env", "models"} <= set(provider)
        for model in provider["models"].values():
            assert isinstance(model["temperature"], bool) and isinstance(model["options"], dict)
            assert model.get("status", "alpha") in ("alpha", "beta", "deprecated")


def test_a_catalog_file_setting_replaces_the_snapshot(tmp_path, monkeypatch):
    path = tmp_path / "api.json"
    path.write_text('{"tiny": {"id": "tiny", "name": "Tiny", "env": [], "models": {"m1": {"id": "m1", '
                    '"name": "M1", "limit": {"context": 10, "output": 5}}}}}')
    monkeypatch.setenv("AGENTSERVER_CATALOG", str(path))
    catalog.catalog.cache_clear()
    try:
        assert list(catalog.catalog()) == ["tiny"]
        assert catalog.catalog()["tiny"]["models"]["m1"]["tool_call"] is True
    finally:
        monkeypatch.delenv("AGENTSERVER_CATALOG")
        catalog.catalog.cache_clear()


def test_an_unreadable_catalog_setting_falls_back_to_the_snapshot(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSERVER_CATALOG", str(tmp_path / "missing.json"))
    catalog.catalog.cache_clear()
    try:
        assert "anthropic" in catalog.catalog()
    finally:
        monkeypatch.delenv("AGENTSERVER_CATALOG")
        catalog.catalog.cache_clear()


def test_catalog_model_routes(alice, anon):
    listed = alice.get("/api/catalog/model")
    assert listed.status_code == 200
    models = listed.json()
    assert len(models) > 1000
    assert {"providerID": "openai", "id": "gpt-4o"}.items() <= next(
        m for m in models if m["providerID"] == "openai" and m["id"] == "gpt-4o").items()
    one = alice.get("/api/catalog/model/openai/gpt-4o")
    assert one.status_code == 200 and one.json()["name"] == "GPT-4o" and one.json()["providerID"] == "openai"
    slashed = next(m for m in models if "/" in m["id"])
    assert alice.get(f"/api/catalog/model/{slashed['providerID']}/{slashed['id']}").status_code == 200
    missing = alice.get("/api/catalog/model/openai/no-such-model")
    assert missing.status_code == 404 and missing.json()["name"] == "NotFoundError"
    assert alice.get("/api/catalog/model/no-such-provider/x").status_code == 404
    assert anon.get("/api/catalog/model").status_code == 401
    assert anon.get("/api/catalog/model/openai/gpt-4o").status_code == 401
