"""/provider and /config/providers never name as a provider's default a model that cannot chat (no text
output, or no tool calls) when the provider has one that can: the web app and the TUI preselect it."""
import pytest

from providers_app.catalog import catalog
from providers_app.models_catalog import can_chat

CHATTY = {"groq": "whisper", "xai": "grok-imagine", "scaleway": "whisper"}


@pytest.fixture
def keyed(alice):
    from projects_app.models import UserConfig

    config, _ = UserConfig.objects.get_or_create(user=alice.user)
    config.data = {"provider": {name: {"options": {"apiKey": "k-123"}} for name in CHATTY}}
    config.save(update_fields=["data"])
    return alice


def test_the_defaults_of_every_route_can_chat(keyed):
    listings = [keyed.get("/provider").json(), keyed.get("/config/providers").json()]
    for listing in listings:
        providers = {p["id"]: p for p in listing.get("all") or listing["providers"]}
        for provider_id, wrong in CHATTY.items():
            model_id = listing["default"][provider_id]
            assert not model_id.startswith(wrong), (provider_id, model_id)
            model = providers[provider_id]["models"][model_id]
            assert model.get("tool_call", model.get("capabilities", {}).get("toolcall")), (provider_id, model_id)


def test_every_catalog_provider_with_a_chat_model_defaults_to_one(keyed):
    listing = keyed.get("/provider").json()
    records = catalog()
    for provider_id, model_id in listing["default"].items():
        record = records.get(provider_id)
        if record and any(can_chat(m) for m in record["models"].values()):
            assert can_chat(record["models"][model_id]), (provider_id, model_id)
