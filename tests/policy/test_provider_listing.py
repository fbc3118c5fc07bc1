"""GET /provider (and the connected lists of /config/providers and v2) show only what the policy allows, a
custom provider a project file defines included; choosing anything else is refused naming the policy."""
import json

from tests.fakes.fixtures import configure_fake_provider, fake_provider_config
from tests.policy.conftest import refusal, text_prompt


def test_the_provider_list_has_only_allowed_providers_and_models(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    set_policy(allowed_providers=["anthropic", "fake"], allowed_models=["anthropic/claude-haiku-*", "fake/*"])
    listed = alice.get("/provider", params={"directory": str(alice.repo)}).json()
    assert {p["id"] for p in listed["all"]} == {"anthropic", "fake"}
    anthropic = next(p for p in listed["all"] if p["id"] == "anthropic")
    assert anthropic["models"] and all(m.startswith("claude-haiku-") for m in anthropic["models"])
    assert set(listed["default"]) <= {"anthropic", "fake"}
    connected = alice.get("/config/providers", params={"directory": str(alice.repo)}).json()
    assert [p["id"] for p in connected["providers"]] == ["fake"]
    v2 = alice.get("/api/model", params={"directory": str(alice.repo)}).json()["data"]
    assert {(m["providerID"], m["id"]) for m in v2} == {("fake", "fake-model")}


def test_a_custom_provider_in_the_projects_config_file_is_dropped_and_refused(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    (alice.repo / "opencode.json").write_text(json.dumps({"provider": {"sideload": fake_provider_config(fake_llm)}}))
    set_policy(allowed_providers=["fake"])
    params = {"directory": str(alice.repo)}
    assert "sideload" not in {p["id"] for p in alice.get("/provider", params=params).json()["all"]}
    assert "sideload" not in alice.get("/config", params=params).json().get("provider", {})
    session = alice.post("/session", params=params, json={}).json()
    answer = alice.post(f"/session/{session['id']}/message", params=params, json=text_prompt(
        "hi", model={"providerID": "sideload", "modelID": "fake-model"}))
    data = refusal(answer)
    assert data["policy"] == "policy of everyone" and data["field"] == "models"
    assert "sideload/fake-model" in data["message"]
    assert alice.get(f"/session/{session['id']}/message", params=params).json() == []


def test_switching_a_v2_session_to_a_refused_model_is_refused(alice, fake_llm, set_policy):
    configure_fake_provider(alice, fake_llm)
    set_policy(group="contractors", members=[alice], allowed_models=["anthropic/*"])
    session = alice.post("/session", params={"directory": str(alice.repo)}, json={}).json()
    answer = alice.post(f"/api/session/{session['id']}/model", params={"directory": str(alice.repo)},
                        json={"model": {"providerID": "fake", "id": "fake-model"}})
    assert refusal(answer)["policy"] == "policy of group 'contractors'"
