"""Connections to MCP servers from this worker, over the `mcp` package's client: stdio for `local` servers,
streamable HTTP (then SSE) for `remote` ones.

Everything here runs on the worker's event loop. A connection is owned by one long-lived task, because the
package's transports are anyio context managers that must be entered and left in the same task; requests
from other tasks go through the connection's ClientSession. Connections are cached per (user, server,
config) and closed after IDLE_SECONDS without use. Every request has a timeout."""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import importlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from django.conf import settings

from agentserver.workers.loop import free_db

if TYPE_CHECKING:
    # The `mcp` package is imported when a server is first connected (connect): importing it cost a fifth of a
    # worker's start (its pydantic models), and most workers never connect one.
    from mcp.client.session import ClientSession

log = logging.getLogger(__name__)

IDLE_SECONDS = float(os.environ.get("AGENTSERVER_MCP_IDLE_SECONDS", "300"))
CONNECT_SECONDS = 10.0
REQUEST_SECONDS = 30.0
TOOL_CALL_SECONDS = 300.0
FAILURE_TTL_SECONDS = 30.0


def connect_wait_cap() -> float:
    """The longest any caller waits for one server to connect (settings.MCP_CONNECT_WAIT_CAP_SECONDS)."""
    return settings.MCP_CONNECT_WAIT_CAP_SECONDS


class McpFailure(Exception):
    status = "failed"


class McpNeedsAuth(McpFailure):
    status = "needs_auth"


@dataclass(frozen=True)
class Target:
    """One server as one user sees it: its normalized config, the directory a local one runs in, and the
    OAuth access token of a remote one (if any)."""

    user_id: int
    name: str
    config: dict
    cwd: str
    token: str | None = None

    @property
    def key(self) -> tuple:
        material = json.dumps([self.config, self.cwd, self.token], sort_keys=True)
        return (self.user_id, self.name, hashlib.sha256(material.encode()).hexdigest())

    def timeout(self, default: float) -> float:
        configured = self.config.get("timeout")
        return configured / 1000 if isinstance(configured, int) else default


def child_environment(config: dict, home: str) -> dict[str, str]:
    """agentserver.sandbox.childenv's allowlist plus what the server's config asks for; never our secrets."""
    from agentserver.sandbox.childenv import safe_environment

    return {**safe_environment(home=home), **(config.get("environment") or {})}


@dataclass
class Connection:
    target: Target
    ready: asyncio.Future
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    session: ClientSession | None = None
    last_used: float = field(default_factory=time.monotonic)
    task: asyncio.Task | None = None

    def close(self) -> None:
        self.stop.set()


_connections: dict[tuple, Connection] = {}
_failures: dict[tuple, tuple[float, McpFailure]] = {}
_devnull = None


def _errlog():
    global _devnull
    if _devnull is None:
        _devnull = open(os.devnull, "w")
    return _devnull


def _describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in error.exceptions)
    text = str(error) or type(error).__name__
    return text[:500]


def _is_unauthorized(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return any(_is_unauthorized(e) for e in error.exceptions)
    response = getattr(error, "response", None)
    if getattr(response, "status_code", None) == 401:
        return True
    return "401" in str(error) and "nauthorized" in str(error)


def _owner_and_roots(user_id: int):
    from auth_app.tokens import roots_of
    from providers_app.store import user_by_id

    owner = user_by_id(user_id)
    return owner, roots_of(owner)


@contextlib.asynccontextmanager
async def _transport(target: Target, kind: str, seen: dict):
    config = target.config
    if kind == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from agentserver.sandbox import launcher as sandbox

        owner, roots = await free_db(_owner_and_roots)(target.user_id)
        # The user's sandbox; a server the user configured is a program they chose, never the server's own.
        launch = await asyncio.to_thread(sandbox.prepare, owner, config["command"],
                                         cwd=config.get("cwd") or target.cwd,
                                         env=child_environment(config, home=target.cwd), roots=roots)
        params = StdioServerParameters(command=launch.argv[0], args=launch.argv[1:], env=launch.env,
                                       cwd=launch.cwd)
        async with stdio_client(params, errlog=_errlog()) as streams:
            yield streams
        return
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = dict(config.get("headers") or {})
    if target.token:
        headers["Authorization"] = f"Bearer {target.token}"

    async def note_status(response) -> None:
        # The transports turn an HTTP 401 into a generic error; remember it to report needs_auth.
        if response.status_code == 401:
            seen["unauthorized"] = True

    def http_client(headers=None, timeout=None, auth=None):
        http = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        http.event_hooks["response"].append(note_status)
        return http

    if kind == "http":
        async with http_client(headers=headers) as http:
            async with streamable_http_client(config["url"], http_client=http) as streams:
                yield streams
    else:
        async with sse_client(config["url"], headers=headers, httpx_client_factory=http_client) as streams:
            yield streams


async def _serve(connection: Connection, kind: str, seen: dict) -> None:
    from mcp.client.session import ClientSession

    async with _transport(connection.target, kind, seen) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            connection.session = session
            connection.ready.set_result(True)
            while not connection.stop.is_set():
                try:
                    await asyncio.wait_for(connection.stop.wait(), timeout=min(IDLE_SECONDS, 30.0))
                except asyncio.TimeoutError:
                    if time.monotonic() - connection.last_used > IDLE_SECONDS:
                        break


async def _own(connection: Connection) -> None:
    """The connection's lifetime: connect (a remote server over streamable HTTP, then SSE, as opencode),
    serve until closed or idle, then leave the transport."""
    target = connection.target
    seen: dict = {}
    kinds = ["stdio"] if target.config["type"] == "local" else ["http", "sse"]
    errors: list[BaseException] = []
    try:
        for kind in kinds:
            try:
                await _serve(connection, kind, seen)
                return
            except asyncio.CancelledError:
                raise
            except BaseException as error:  # noqa: BLE001 - any transport failure is a status, never a crash
                if connection.ready.done():
                    log.info("MCP server %s closed: %s", target.name, _describe(error))
                    return
                errors.append(error)
                if seen.get("unauthorized"):
                    break
        unauthorized = seen.get("unauthorized") or any(_is_unauthorized(e) for e in errors)
        if unauthorized and target.config.get("oauth") is not False:
            failure = McpNeedsAuth("Authentication required")
        else:
            failure = McpFailure("Unauthorized (HTTP 401)" if unauthorized else _describe(errors[0]))
        if not connection.ready.done():
            connection.ready.set_exception(failure)
    except asyncio.CancelledError:
        if not connection.ready.done():
            connection.ready.set_exception(McpFailure("Connection cancelled"))
    finally:
        connection.session = None
        if _connections.get(target.key) is connection:
            del _connections[target.key]


async def connect(target: Target) -> Connection:
    """The live connection for `target`, made now if needed. Raises McpFailure (or McpNeedsAuth)."""
    key = target.key
    connection = _connections.get(key)
    if connection is None or connection.stop.is_set():
        failed = _failures.get(key)
        if failed and time.monotonic() - failed[0] < FAILURE_TTL_SECONDS:
            raise failed[1]
        # The package loads off the loop (a second of CPU, once per worker) and before the connect timeout runs.
        await asyncio.to_thread(importlib.import_module, "mcp.client.session")
        connection = _connections.get(key)
    if connection is None or connection.stop.is_set():
        connection = Connection(target=target, ready=asyncio.get_running_loop().create_future())
        _connections[key] = connection
        # A clean context: not the caller's (a request's or runner's), the connection outlives both.
        connection.task = asyncio.get_running_loop().create_task(_own(connection), context=contextvars.Context())
    try:
        await asyncio.wait_for(asyncio.shield(connection.ready),
                               timeout=min(target.timeout(CONNECT_SECONDS), connect_wait_cap()))
    except asyncio.TimeoutError:
        connection.close()
        if connection.task:
            connection.task.cancel()
        failure = McpFailure(f"Timed out connecting to MCP server {target.name}")
        _failures[key] = (time.monotonic(), failure)
        raise failure from None
    except McpFailure as failure:
        _failures[key] = (time.monotonic(), failure)
        raise
    _failures.pop(key, None)
    connection.last_used = time.monotonic()
    return connection


async def request(target: Target, call: Callable[[ClientSession], Awaitable[Any]], *,
                  timeout: float = REQUEST_SECONDS) -> Any:
    """Run one request on the server's session with a timeout. Protocol errors keep the connection; a broken
    or stuck transport closes it, so the next request reconnects."""
    from mcp.shared.exceptions import MCPError

    connection = await connect(target)
    try:
        return await asyncio.wait_for(call(connection.session), timeout=timeout)
    except MCPError as error:
        raise McpFailure(_describe(error)) from None
    except asyncio.TimeoutError:
        connection.close()
        raise McpFailure(f"MCP server {target.name} did not answer within {timeout:g} s") from None
    except Exception as error:  # noqa: BLE001
        connection.close()
        raise McpFailure(_describe(error)) from None
    finally:
        connection.last_used = time.monotonic()


async def disconnect(*, user_id: int, name: str | None = None) -> None:
    for key, connection in list(_connections.items()):
        if key[0] == user_id and (name is None or key[1] == name):
            connection.close()
    for key in [k for k in _failures if k[0] == user_id and (name is None or k[1] == name)]:
        _failures.pop(key, None)
