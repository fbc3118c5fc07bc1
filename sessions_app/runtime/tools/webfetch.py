"""webfetch: GET an http(s) URL and return it as markdown, text or html. Private, loopback and link-local
addresses are refused (the server's own network is not the model's to explore) unless the operator or
the user's config allows them."""
from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from urllib.parse import urljoin, urlsplit

import httpx
from django.conf import settings

from agentserver.numerals import decimal
from sessions_app.runtime.tools import htmltext
from sessions_app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult, optional_int, require_str, schema

MAX_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT = 30
MAX_TIMEOUT = 120
MAX_REDIRECTS = 5

DESCRIPTION = """- Fetches content from a specified URL
- Takes a URL and optional format as input
- Fetches the URL content, converts to requested format (markdown by default)
- Returns the content in the specified format
- Use this tool when you need to retrieve and analyze web content

Usage notes:
  - IMPORTANT: if another tool is present that offers better web fetching capabilities, is more targeted to the task, or has fewer restrictions, prefer using that tool instead of this one.
  - The URL must be a fully-formed valid URL
  - HTTP URLs will NOT be automatically upgraded to HTTPS
  - Format options: "markdown" (default), "text", or "html"
  - This tool is read-only and does not modify any files
  - Results may be summarized if the content is very large"""


def allow_private(config: dict) -> bool:
    flag = getattr(settings, "AGENTSERVER_WEBFETCH_ALLOW_PRIVATE", None)
    if flag is None:
        flag = os.environ.get("AGENTSERVER_WEBFETCH_ALLOW_PRIVATE", "")
    if str(flag).lower() in ("1", "true", "yes", "on"):
        return True
    section = (config or {}).get("webfetch")
    return isinstance(section, dict) and section.get("allow_private") is True


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
                or ip.is_unspecified)


async def check_host(url: str, *, allow: bool) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolError("URL must start with http:// or https://")
    if allow:
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(parts.hostname, parts.port or 80,
                                                             type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ToolError(f"Could not resolve host {parts.hostname}: {error}")
    if not infos or not all(_public(info[4][0]) for info in infos):
        raise ToolError(f"Refusing to fetch {url}: {parts.hostname} resolves to a private, loopback or "
                        "link-local address")


class WebFetchTool(Tool):
    id = "webfetch"
    description = DESCRIPTION
    parameters = schema({
        "url": {"type": "string", "description": "The URL to fetch content from"},
        "format": {"type": "string", "enum": ["text", "markdown", "html"], "default": "markdown",
                   "description": "The format to return the content in (text, markdown, or html). Defaults to markdown."},
        "timeout": {"type": "number", "description": "Optional timeout in seconds (max 120)"},
    }, ["url", "format"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        url = require_str(args, "url")
        fmt = args.get("format") or "markdown"
        if fmt not in ("text", "markdown", "html"):
            raise ToolError("Invalid arguments: 'format' must be one of text, markdown, html")
        timeout = min(optional_int(args, "timeout") or DEFAULT_TIMEOUT, MAX_TIMEOUT)
        if not url.startswith(("http://", "https://")):
            raise ToolError("URL must start with http:// or https://")
        await ctx.ask("webfetch", [url], metadata={"url": url, "format": fmt, "timeout": timeout}, always=["*"])
        allow = allow_private(await ctx.get_config())
        body, content_type = await self._fetch(url, fmt, timeout, allow, ctx.abort)
        text = body.decode("utf-8", errors="replace")
        is_html = "html" in content_type
        if fmt == "markdown" and is_html:
            text = htmltext.to_markdown(text)
        elif fmt == "text" and is_html:
            text = htmltext.to_text(text)
        return ToolResult(output=text, title=f"{url} ({content_type})", metadata={})

    async def _fetch(self, url: str, fmt: str, timeout: int, allow: bool, abort: asyncio.Event) -> tuple[bytes, str]:
        accept = {"markdown": "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
                  "text": "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
                  "html": "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, */*;q=0.1"}[fmt]
        headers = {"User-Agent": "Mozilla/5.0 (compatible; agentserver-webfetch)", "Accept": accept,
                   "Accept-Language": "en-US,en;q=0.9"}
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client:
            for _ in range(MAX_REDIRECTS + 1):
                await check_host(url, allow=allow)
                async with client.stream("GET", url, headers=headers) as response:
                    if response.is_redirect and response.headers.get("location"):
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise ToolError(f"Request failed with status code: {response.status_code}")
                    length = decimal(response.headers.get("content-length"), digits=30)
                    if length is not None and length > MAX_BYTES:
                        raise ToolError("Response too large (exceeds 5MB limit)")
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        if abort.is_set():
                            raise ToolError("Request aborted")
                        body += chunk
                        if len(body) > MAX_BYTES:
                            raise ToolError("Response too large (exceeds 5MB limit)")
                    return bytes(body), response.headers.get("content-type", "")
        raise ToolError("Too many redirects")
