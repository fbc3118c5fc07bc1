"""resolve_model / default_model / small_model for a runtime context, and usage → cost."""
import pytest

from agentserver.errors import BadRequest
from projects_app.models import UserConfig
from providers_app import models_catalog
from providers_app.pricing import cost_of
from providers_app.stream import Usage
from tests.fakes.fixtures import configure_fake_provider
from tests.fakes.llm import Reply
from tests.providers.helpers import collect, context_of, text_of


def set_config(persona, data):
    UserConfig.objects.update_or_create(user=persona.user, defaults={"data": data})


def test_the_configured_model_is_the_default(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    context = context_of(alice)
    assert models_catalog.default_model(context=context) == ("fake", "fake-model")
    assert models_catalog.small_model(context=context) == ("fake", "fake-model")
    info = models_catalog.resolve_model(context=context, provider_id="fake", model_id="fake-model")
    assert info.protocol == "openai" and info.base_url == fake_llm.base_url
    assert info.limit["output"] == 4096 and info.cost["input"] == 1.0


def test_without_a_configured_model_the_first_connected_provider_wins(alice):
    set_config(alice, {"provider": {"anthropic": {"options": {"apiKey": "k"}}}})
    context = context_of(alice)
    provider_id, model_id = models_catalog.default_model(context=context)
    assert provider_id == "anthropic" and "claude" in model_id
    small = models_catalog.small_model(context=context)
    assert small[0] == "anthropic" and "haiku" in small[1]


def test_no_connected_provider_and_no_model_is_a_bad_request(alice):
    set_config(alice, {})
    with pytest.raises(BadRequest):
        models_catalog.default_model(context=context_of(alice))


def test_an_unknown_pair_is_a_bad_request(alice):
    set_config(alice, {})
    with pytest.raises(BadRequest):
        models_catalog.resolve_model(context=context_of(alice), provider_id="openai", model_id="nope")
    with pytest.raises(BadRequest):
        models_catalog.resolve_model(context=context_of(alice), provider_id="nope", model_id="gpt-4o")


def test_the_protocol_follows_the_npm_package(alice):
    set_config(alice, {"provider": {"openrouter": {"options": {"apiKey": "k"}}}})
    context = context_of(alice)
    assert models_catalog.resolve_model(context=context, provider_id="anthropic",
                                        model_id="claude-sonnet-4-5").protocol == "anthropic"
    info = models_catalog.resolve_model(context=context, provider_id="openai", model_id="gpt-4o")
    assert info.protocol == "openai" and info.base_url == "https://api.openai.com/v1"
    groq = next(iter(models_catalog.provider_entries(context)["groq"].record["models"]))
    assert models_catalog.resolve_model(context=context, provider_id="groq",
                                        model_id=groq).base_url == "https://api.groq.com/openai/v1"


def test_a_keyless_custom_endpoint_streams_with_a_mapped_api_model_id(alice, fake_llm):
    set_config(alice, {"provider": {"local": {"options": {"baseURL": fake_llm.base_url},
                                              "models": {"small": {"id": "org/real-name"}}}}})
    fake_llm.script(Reply(text="local answer"))
    events = collect(alice, provider_id="local", model_id="small")
    assert text_of(events) == "local answer"
    assert fake_llm.requests[-1].body["model"] == "org/real-name"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_usage_counts_cache_and_reasoning_tokens_and_cost(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(text="ok", usage={"input": 1000, "output": 200, "reasoning": 0, "cache_read": 4000,
                                            "cache_write": 0}))
    finish = collect(alice)[-1]
    assert (finish.usage.input, finish.usage.output, finish.usage.cache_read) == (1000, 200, 4000)
    assert finish.cost == pytest.approx((1000 * 1.0 + 200 * 2.0 + 4000 * 0.5) / 1_000_000)


def test_cost_uses_per_million_prices_and_the_over_200k_tier():
    cost = {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75,
            "context_over_200k": {"input": 6, "output": 22.5}}
    assert cost_of(Usage(input=100_000, output=100_000), cost) == pytest.approx(0.3 + 1.5)
    assert cost_of(Usage(input=100, output=10, reasoning=5, cache_read=1000, cache_write=10), cost) == \
        pytest.approx((100 * 3 + 15 * 15 + 1000 * 0.3 + 10 * 3.75) / 1e6)
    assert cost_of(Usage(input=250_000), cost) == pytest.approx(250_000 * 6 / 1e6)
    assert cost_of(Usage(input=5), {}) == 0.0
