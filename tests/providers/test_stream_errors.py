"""Provider failures become ProviderCallError (retryable for 429/5xx and broken connections) or ProviderAuthError."""
import asyncio

import pytest

from agentserver.errors import BadRequest
from projects_app.models import UserConfig
from providers_app.errors import ProviderCallError, ProviderAuthError
from tests.fakes.fixtures import configure_fake_provider
from tests.fakes.llm import Reply
from tests.providers.helpers import collect, collect_async, context_of, text_of

PROTOCOLS = ["openai", "anthropic"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_400_is_a_non_retryable_api_error_with_status_and_body(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(error_status=400, error_message="bad tool schema"))
    with pytest.raises(ProviderCallError) as caught:
        collect(alice)
    error = caught.value
    assert error.status_code == 400 and error.is_retryable is False
    assert error.message == "bad tool schema"
    assert "bad tool schema" in error.response_body
    named = error.named()
    assert named["name"] == "APIError"
    assert named["data"]["statusCode"] == 400 and named["data"]["isRetryable"] is False
    assert "bad tool schema" in named["data"]["responseBody"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("status", [429, 503])
def test_rate_limits_and_server_errors_are_retryable(alice, fake_llm, protocol, status):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(error_status=status, error_headers={"retry-after": "2"}))
    with pytest.raises(ProviderCallError) as caught:
        collect(alice)
    assert caught.value.status_code == status and caught.value.is_retryable is True
    assert caught.value.response_headers.get("retry-after") == "2"
    assert len(fake_llm.requests) == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stream_that_breaks_midway_is_a_retryable_error_after_the_text_so_far(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(text="one two three four five", break_after=2))
    seen = []
    context = context_of(alice)

    async def run():
        async for event in collect_events(context):
            seen.append(event)

    with pytest.raises(ProviderCallError) as caught:
        asyncio.run(run())
    assert caught.value.is_retryable is True
    assert text_of(seen) == "one two"


def collect_events(context):
    from providers_app.llm import stream_chat

    return stream_chat(context=context, provider_id="fake", model_id="fake-model", system=[],
                       messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}], tools=[])


def test_a_missing_key_is_a_provider_auth_error(alice):
    UserConfig.objects.update_or_create(user=alice.user, defaults={"data": {}})
    with pytest.raises(ProviderAuthError) as caught:
        collect(alice, provider_id="openai", model_id="gpt-4o")
    assert caught.value.named() == {"name": "ProviderAuthError", "data": {
        "providerID": "openai", "message": caught.value.message}}
    assert "OPENAI_API_KEY" in caught.value.message


def test_an_unknown_model_is_a_bad_request(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    with pytest.raises(BadRequest):
        collect(alice, model_id="no-such-model")


def test_an_unreachable_endpoint_is_a_retryable_error(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    data = UserConfig.objects.get(user=alice.user).data
    data["provider"]["fake"]["options"]["baseURL"] = "http://127.0.0.1:9/v1"
    UserConfig.objects.filter(user=alice.user).update(data=data)
    with pytest.raises(ProviderCallError) as caught:
        collect(alice)
    assert caught.value.is_retryable is True and caught.value.status_code is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cancelling_the_consumer_closes_a_slow_stream(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(text="a b c d e f g h i j", delay=0.3), Reply(text="after"))
    context = context_of(alice)

    async def run():
        got = []

        async def consume():
            async for event in collect_events(context):
                got.append(event)
                if len(got) == 2:
                    task.cancel()

        task = asyncio.ensure_future(consume())
        with pytest.raises(asyncio.CancelledError):
            await task
        return got

    got = asyncio.run(run())
    assert len(got) == 2
    # The server side noticed the client going away; the next call works normally.
    assert text_of(collect(alice)) == "after"
