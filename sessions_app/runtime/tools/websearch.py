"""websearch: search the web through the backend the operator or the user configured; without one the tool
does not exist (it is absent from tool.ids and from what models are offered).

Backends, first match wins:
1. the user's config `websearch`: `false` turns it off; `{provider: "searxng", url}` is a SearXNG-compatible
   JSON endpoint (GET <url>/search?q=…&format=json); `{provider: "exa", apiKey?, url?}` is Exa's search API,
   the key from the section or else from the user's active auth account of service `exa`;
2. the operator's SearXNG endpoint, AGENTSERVER_WEBSEARCH_URL;
3. an active auth account of service `exa` (Exa at its public URL).

Addresses: the operator's URL (and Exa's own) is trusted and may be anything, a SearXNG beside the server on
127.0.0.1 included. A URL from the user's config is the user's choice of where the server sends requests, so
it gets webfetch's rule: private, loopback and link-local addresses are refused unless webfetch may reach them
(AGENTSERVER_WEBFETCH_ALLOW_PRIVATE, or the config's `webfetch.allow_private`)."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from sessions_app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult, optional_int, require_str, schema
from sessions_app.runtime.tools.webfetch import allow_private, check_host

EXA_URL = "https://api.exa.ai/search"
TIMEOUT = 25
DEFAULT_RESULTS = 8
MAX_RESULTS = 50
DEFAULT_CONTEXT_CHARS = 10_000
MAX_RESPONSE_BYTES = 5 * 1024 * 1024

DESCRIPTION = """- Searches the web and returns the most relevant pages with their content
- Provides up-to-date information for current events and recent data
- Supports configurable result counts
- Use this tool for accessing information beyond knowledge cutoff
- Searches are performed automatically within a single API call

Usage notes:
  - Search types: 'auto' (balanced), 'fast' (quick results), 'deep' (comprehensive search)
  - Live crawling modes: 'fallback' (backup if cached unavailable) or 'preferred' (prioritize live crawling)
  - Configurable context length for optimal LLM integration"""


@dataclass(frozen=True)
class Backend:
    provider: str  # "searxng" | "exa"
    url: str
    api_key: str | None = None
    trusted: bool = False  # set by the operator (or Exa's own URL): no private-address check

    @property
    def label(self) -> str:
        return "Exa Web Search" if self.provider == "exa" else "Web Search"


def _exa_account_key(user) -> str | None:
    from auth_app.accounts import active_credential

    credential = active_credential(user, "exa")
    if credential and credential.get("type") == "api" and credential.get("key"):
        return credential["key"]
    return None


def backend_for(context, config: dict) -> Backend | None:
    section = config.get("websearch")
    if section is False:
        return None
    if isinstance(section, dict):
        provider = section.get("provider") or ("searxng" if section.get("url") else None)
        url = section.get("url") if isinstance(section.get("url"), str) and section.get("url") else None
        if provider == "searxng" and url:
            return Backend("searxng", url)
        if provider == "exa":
            key = section.get("apiKey") if isinstance(section.get("apiKey"), str) else None
            key = key or _exa_account_key(context.user)
            if key:
                return Backend("exa", url or EXA_URL, key, trusted=url is None)
    operator_url = getattr(settings, "WEBSEARCH_URL", "")
    if operator_url:
        return Backend("searxng", operator_url, trusted=True)
    key = _exa_account_key(context.user)
    return Backend("exa", EXA_URL, key, trusted=True) if key else None


def configured_tools(context, config: dict | None = None) -> list[Tool]:
    """The dynamic-tool provider the registry calls: [websearch] when a backend is configured."""
    if config is None:
        from projects_app.config import effective_config

        config = effective_config(context)
    backend = backend_for(context, config)
    return [WebSearchTool(backend)] if backend else []


def _searxng_url(url: str) -> str:
    path = urlsplit(url).path.rstrip("/")
    return url if path.endswith("/search") else url.rstrip("/") + "/search"


def _format(results: list[dict], limit_chars: int) -> str:
    blocks = []
    for item in results:
        title = str(item.get("title") or item.get("url") or "").strip()
        text = str(item.get("text") or item.get("content") or "").strip()
        blocks.append(f"Title: {title}\nURL: {item.get('url', '')}\n{text}".rstrip())
    out = "\n\n".join(blocks)
    if len(out) > limit_chars:
        out = out[:limit_chars] + "\n\n... (results truncated)"
    return out


class WebSearchTool(Tool):
    id = "websearch"
    description = DESCRIPTION
    parameters = schema({
        "query": {"type": "string", "description": "Websearch query"},
        "numResults": {"type": "number", "description": "Number of search results to return (default: 8)"},
        "livecrawl": {"type": "string", "enum": ["fallback", "preferred"],
                      "description": "Live crawl mode - 'fallback': use live crawling as backup if cached content "
                                     "unavailable, 'preferred': prioritize live crawling (default: 'fallback')"},
        "type": {"type": "string", "enum": ["auto", "fast", "deep"],
                 "description": "Search type - 'auto': balanced search (default), 'fast': quick results, "
                                "'deep': comprehensive search"},
        "contextMaxCharacters": {"type": "number",
                                 "description": "Maximum characters for context string optimized for LLMs "
                                                "(default: 10000)"},
    }, ["query"])

    def __init__(self, backend: Backend):
        self.backend = backend

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        query = require_str(args, "query")
        count = max(1, min(optional_int(args, "numResults") or DEFAULT_RESULTS, MAX_RESULTS))
        limit_chars = max(100, optional_int(args, "contextMaxCharacters") or DEFAULT_CONTEXT_CHARS)
        kind = args.get("type") or "auto"
        livecrawl = args.get("livecrawl") or "fallback"
        if kind not in ("auto", "fast", "deep") or livecrawl not in ("fallback", "preferred"):
            raise ToolError("Invalid arguments: 'type' must be auto, fast or deep; 'livecrawl' fallback or preferred")
        backend = self.backend
        await ctx.update(title=f'{backend.label} "{query}"', metadata={"provider": backend.provider})
        await ctx.ask("websearch", [query], metadata={"query": query, "numResults": count, "type": kind,
                                                      "livecrawl": livecrawl, "provider": backend.provider},
                      always=["*"])
        await check_host(backend.url, allow=backend.trusted or allow_private(await ctx.get_config()))
        if backend.provider == "exa":
            results = await self._exa(query, count, kind, livecrawl, limit_chars)
        else:
            results = await self._searxng(query, count)
        output = _format(results, limit_chars) if results else "No search results found. Please try a different query."
        return ToolResult(output=output, title=f"{backend.label}: {query}",
                          metadata={"provider": backend.provider, "results": len(results)})

    async def _request(self, method: str, url: str, **kwargs) -> dict:
        async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as client:
            try:
                response = await client.request(method, url, **kwargs)
            except httpx.HTTPError as error:
                raise ToolError(f"Search request failed: {type(error).__name__}: {error}") from None
        if response.status_code >= 400:
            raise ToolError(f"Search request failed with status code: {response.status_code}")
        if len(response.content) > MAX_RESPONSE_BYTES:
            raise ToolError("Search response too large")
        try:
            body = response.json()
        except ValueError:
            raise ToolError("The search backend did not answer with JSON") from None
        if not isinstance(body, dict):
            raise ToolError("The search backend answered with an unexpected shape")
        return body

    async def _searxng(self, query: str, count: int) -> list[dict]:
        body = await self._request("GET", _searxng_url(self.backend.url),
                                   params={"q": query, "format": "json", "pageno": 1},
                                   headers={"Accept": "application/json"})
        results = body.get("results")
        return [r for r in results if isinstance(r, dict)][:count] if isinstance(results, list) else []

    async def _exa(self, query: str, count: int, kind: str, livecrawl: str, limit_chars: int) -> list[dict]:
        payload = {"query": query, "numResults": count, "type": kind,
                   "contents": {"text": {"maxCharacters": limit_chars}, "livecrawl": livecrawl}}
        body = await self._request("POST", self.backend.url, json=payload,
                                   headers={"x-api-key": self.backend.api_key or "", "Accept": "application/json"})
        results = body.get("results")
        return [r for r in results if isinstance(r, dict)][:count] if isinstance(results, list) else []
