"""websearch: a SearXNG-compatible endpoint or Exa, configured by the operator or the user; absent when
unconfigured. The backends here are small HTTP servers on 127.0.0.1 that answer like the real ones."""
import json

import pytest
from asgiref.sync import sync_to_async

from sessions_app.runtime.tools.base import ToolError
from sessions_app.runtime.tools.websearch import configured_tools
from tests.fakes.search_backend import search_backend  # noqa: F401  (fixture)

EXA_KEY = "exa-key-0123456789abcdef"


async def tools_of(ws, config):
    return await sync_to_async(configured_tools, thread_sensitive=False)(ws.context, config)


async def search(ws, config, **args):
    tools = await tools_of(ws, config)
    assert [t.id for t in tools] == ["websearch"]
    return await tools[0].run({"query": "django lts", **args}, ws.tool_context(config=config))


async def test_without_a_backend_there_is_no_tool(ws, settings):
    settings.WEBSEARCH_URL = ""
    assert await tools_of(ws, {}) == []
    assert await tools_of(ws, {"websearch": {"provider": "exa"}}) == []  # no key anywhere
    assert await tools_of(ws, {"websearch": {"provider": "searxng"}}) == []  # no url


async def test_a_searxng_endpoint_from_the_users_config(ws, search_backend):  # noqa: F811
    config = {"websearch": {"provider": "searxng", "url": search_backend.url}, "webfetch": {"allow_private": True}}
    result = await search(ws, config, numResults=1)
    assert "Title: Django 5.2 released\nURL: https://example.org/django-52" in result.output
    assert "Python 3.11" not in result.output
    assert result.title == "Web Search: django lts" and result.metadata["provider"] == "searxng"
    request = search_backend.seen[0]
    assert request["path"] == "/search" and request["query"]["q"] == ["django lts"]
    assert request["query"]["format"] == ["json"]


async def test_a_users_backend_on_a_private_address_is_refused_like_webfetch(ws, search_backend):  # noqa: F811
    config = {"websearch": {"provider": "searxng", "url": search_backend.url}}
    with pytest.raises(ToolError, match="private, loopback or link-local"):
        await search(ws, config)
    assert search_backend.seen == []


async def test_the_operators_endpoint_is_trusted_on_loopback(ws, search_backend, settings):  # noqa: F811
    settings.WEBSEARCH_URL = search_backend.url + "/search"
    result = await search(ws, {})
    assert "Django 5.2 is a long-term support release." in result.output
    assert search_backend.seen[0]["path"] == "/search"
    # The user can still turn it off.
    assert await tools_of(ws, {"websearch": False}) == []


async def test_exa_with_the_key_from_the_config(ws, search_backend):  # noqa: F811
    config = {"websearch": {"provider": "exa", "apiKey": EXA_KEY, "url": search_backend.url + "/search"},
              "webfetch": {"allow_private": True}}
    result = await search(ws, config, numResults=2, type="fast", contextMaxCharacters=5000)
    assert result.title == "Exa Web Search: django lts" and "Faster CPython." in result.output
    request = search_backend.seen[0]
    assert request["method"] == "POST" and request["key"] == EXA_KEY
    assert request["body"]["query"] == "django lts" and request["body"]["numResults"] == 2
    assert request["body"]["type"] == "fast"
    assert request["body"]["contents"]["text"]["maxCharacters"] == 5000
    assert EXA_KEY not in json.dumps(result.metadata) and EXA_KEY not in result.output


async def test_exa_with_the_key_of_the_users_exa_account(ws, search_backend):  # noqa: F811
    from auth_app.accounts import account_create

    await sync_to_async(account_create, thread_sensitive=False)(
        user=ws.user, service_id="exa", credential={"type": "api", "key": EXA_KEY})
    config = {"websearch": {"provider": "exa", "url": search_backend.url}, "webfetch": {"allow_private": True}}
    await search(ws, config)
    assert search_backend.seen[0]["key"] == EXA_KEY
    # With only the account and no section, Exa's public URL is the backend.
    tools = await tools_of(ws, {})
    assert tools[0].backend.url == "https://api.exa.ai/search"


async def test_bad_arguments_are_tool_errors(ws, search_backend):  # noqa: F811
    config = {"websearch": {"provider": "searxng", "url": search_backend.url}, "webfetch": {"allow_private": True}}
    tool = (await tools_of(ws, config))[0]
    for args in ({}, {"query": ""}, {"query": "x", "type": "slow"}, {"query": "x", "numResults": "many"}):
        with pytest.raises(ToolError, match="Invalid arguments"):
            await tool.run(args, ws.tool_context(config=config))
    assert search_backend.seen == []
