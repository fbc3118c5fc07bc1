"""pytest fixtures of the fake LLM (registered in tests/conftest.py through `pytest_plugins`).

    def test_x(alice, fake_llm):
        configure_fake_provider(alice, fake_llm)            # provider `fake`, model `fake-model`, the default
        fake_llm.script(Reply(text="hi", chunks=2), Reply(tool_calls=[("bash", {"command": "ls"})]))
"""
from __future__ import annotations

import pytest

from tests.fakes.llm import FakeLLM, Reply  # noqa: F401  (re-exported for tests)

FAKE_PROVIDER = "fake"
FAKE_MODEL = "fake-model"
FAKE_KEY = "fake-secret-key-0123456789"
PROTOCOL_NPM = {"openai": "@ai-sdk/openai-compatible", "anthropic": "@ai-sdk/anthropic"}


@pytest.fixture(scope="session")
def _fake_llm_server():
    fake = FakeLLM()
    yield fake
    fake.close()


@pytest.fixture
def fake_llm(_fake_llm_server) -> FakeLLM:
    """The scripted LLM server, with an empty queue and no recorded requests."""
    _fake_llm_server.reset()
    yield _fake_llm_server
    _fake_llm_server.reset()


def fake_provider_config(fake_llm: FakeLLM, protocol: str = "openai") -> dict:
    return {
        "name": "Fake LLM",
        "npm": PROTOCOL_NPM[protocol],
        "options": {"baseURL": fake_llm.base_url, "apiKey": FAKE_KEY},
        "models": {
            FAKE_MODEL: {
                "name": "Fake Model",
                "attachment": True,
                "reasoning": True,
                "temperature": True,
                "tool_call": True,
                "limit": {"context": 128000, "output": 4096},
                "cost": {"input": 1.0, "output": 2.0, "cache_read": 0.5, "cache_write": 1.25},
            },
        },
    }


def configure_fake_provider(persona, fake_llm: FakeLLM, protocol: str = "openai") -> dict:
    """Point the persona's global config at the fake: provider `fake`, model `fake-model`, which becomes the
    default `model` and `small_model`. Other keys of the persona's config are kept. Returns the new config."""
    from projects_app.models import UserConfig

    user = getattr(persona, "user", persona)
    config, _ = UserConfig.objects.get_or_create(user=user)
    data = dict(config.data or {})
    providers = dict(data.get("provider") or {})
    providers[FAKE_PROVIDER] = fake_provider_config(fake_llm, protocol)
    data.update(provider=providers, model=f"{FAKE_PROVIDER}/{FAKE_MODEL}",
                small_model=f"{FAKE_PROVIDER}/{FAKE_MODEL}")
    config.data = data
    config.save(update_fields=["data"])
    return data
