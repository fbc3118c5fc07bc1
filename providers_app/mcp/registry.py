"""Which MCP servers a user has in a context, and what they offer.

A context's servers are the effective config's `mcp` map plus the ones added with `mcp.server.create`
(McpServer rows of the user and the context's project; a runtime server replaces a config one of the same
name). The functions here are synchronous (ORM) and reach the connections on the worker's loop through
`agentserver.workers.loop.call`; they never raise for a server that fails to start: that is its status."""
from __future__ import annotations

import asyncio
import logging
import os
import re
from dataclasses import dataclass

from django.db import transaction

from agentserver.errors import BadRequest, Conflict, NotFound
from agentserver.events import publisher as events
from agentserver.workers import loop as server_loop
from audit_app.log import record
from auth_app import crypto
from policy_app.config_layer import mcp_refusal
from policy_app.selectors import policy_for
from providers_app import store
from providers_app.mcp import client, configs

log = logging.getLogger(__name__)
SERVICE_PREFIX = "mcp:"


def service_id(name: str) -> str:
    """The auth account service that holds a remote server's OAuth tokens."""
    return SERVICE_PREFIX + name


@dataclass(frozen=True)
class Server:
    name: str
    config: dict | None          # normalized; None when the config entry is invalid
    error: str | None = None
    source: str = "config"       # "config" | "runtime"
    refused_by: str | None = None  # the organization's policy that does not allowlist it (then config is None)

    @property
    def enabled(self) -> bool:
        return self.config is not None and self.config.get("enabled", True) is not False

    def describe(self) -> dict:
        return {"name": self.name, "type": (self.config or {}).get("type", "unknown"), "source": self.source}


# ---- selectors ----------------------------------------------------------------------------------------

def _runtime_servers(context) -> dict[str, Server]:
    out: dict[str, Server] = {}
    for row in store.runtime_servers_of(context.user.pk, context.project_id):
        try:
            config = configs.normalize(crypto.decrypt_json(row.ciphertext))
        except crypto.CredentialDecryptError:
            out[row.name] = Server(row.name, None, "Stored config cannot be decrypted", "runtime")
            continue
        except BadRequest as error:
            out[row.name] = Server(row.name, None, error.message, "runtime")
            continue
        out[row.name] = Server(row.name, config, None, "runtime")
    return out


def servers_for(context, config: dict | None = None) -> dict[str, Server]:
    """`config`: the context's effective config when the caller already has it."""
    from projects_app.config import effective_config

    out: dict[str, Server] = {}
    entries = (config if config is not None else effective_config(context)).get("mcp")
    if isinstance(entries, dict):
        for name, value in entries.items():
            try:
                out[name] = Server(name, configs.normalize(value, ["mcp", name]))
            except BadRequest as error:
                out[name] = Server(name, None, f"Invalid config: {error.message}")
    out.update(_runtime_servers(context))
    policy = policy_for(context.user)
    return {name: _confined(context, _within_policy(server, policy)) for name, server in out.items()}


def _within_policy(server: Server, policy) -> Server:
    """A server the organization's policy does not allowlist fails with the policy named, whatever its
    source (a config file, PATCH /config, mcp.server.create before the policy changed)."""
    refused = policy.mcp_refused_by(server.config) if server.config is not None else None
    if refused is None:
        return server
    return Server(server.name, None, f"Not on the MCP allowlist of the {refused}", server.source, refused)


def _confined(context, server: Server) -> Server:
    """A local server's `cwd` (relative to the context directory) must stay inside the user's roots."""
    cwd = (server.config or {}).get("cwd")
    if not cwd:
        return server
    from agentserver import paths
    from agentserver.errors import ApiError
    from auth_app.tokens import roots_of

    try:
        real = paths.confine(os.path.join(context.directory, cwd), roots_of(context.user))
    except ApiError as error:
        return Server(server.name, None, f"cwd: {error.message}", server.source)
    return Server(server.name, {**server.config, "cwd": real}, None, server.source)


def server_get(context, name: str) -> Server:
    server = servers_for(context).get(name)
    if server is None:
        raise NotFound(f"MCP server not found: {name}", name=name)
    return server


def access_token(user, name: str) -> str | None:
    from auth_app.accounts import active_credential

    credential = active_credential(user, service_id(name))
    if credential and credential.get("type") == "oauth":
        return credential.get("access") or None
    return None


def target_of(context, server: Server) -> client.Target:
    token = access_token(context.user, server.name) if configs.uses_oauth(server.config) else None
    return client.Target(user_id=context.user.pk, name=server.name, config=server.config, cwd=context.directory,
                         token=token)


def _call(coroutine_function, *args, timeout: float):
    """Run on the server loop from a thread. On the loop's own thread (never expected) this fails with
    McpFailure rather than deadlocking."""
    server_loop.server_loop()
    if server_loop.on_loop_thread():
        raise client.McpFailure("MCP is not reachable from the event loop thread")
    return server_loop.call(coroutine_function, *args, timeout=timeout)


# ---- status -------------------------------------------------------------------------------------------

# A status probe's list of tools waits at most this: with the connect's cap, a status answers within half a
# minute whatever a server's configured timeout says.
PROBE_LIST_CAP_SECONDS = 5.0


async def _probe(target: client.Target) -> dict:
    try:
        result = await client.request(target, lambda s: s.list_tools(),
                                      timeout=min(target.timeout(5.0), PROBE_LIST_CAP_SECONDS))
    except client.McpFailure as failure:
        out = {"status": failure.status}
        if failure.status == "failed":
            out["error"] = str(failure)
        return out
    return {"status": "connected", "tools": len(result.tools)}


async def _probe_all(targets: list[client.Target]) -> list[dict]:
    return list(await asyncio.gather(*(_probe(t) for t in targets)))


def _statuses(context, servers: dict[str, Server]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    live: list[Server] = []
    for server in servers.values():
        if server.config is None:
            out[server.name] = {"status": "failed", "error": server.error or "Invalid config"}
        elif not server.enabled:
            out[server.name] = {"status": "disabled"}
        else:
            live.append(server)
    if live:
        targets = [target_of(context, s) for s in live]
        timeout = client.connect_wait_cap() + PROBE_LIST_CAP_SECONDS + 10
        try:
            results = _call(_probe_all, targets, timeout=timeout)
        except Exception as error:  # noqa: BLE001 - the loop could not answer in time
            results = [{"status": "failed", "error": f"{type(error).__name__}: {error}"}] * len(targets)
        out.update({s.name: r for s, r in zip(live, results)})
    return {name: out[name] for name in servers}


def status_map(*, context) -> dict[str, dict]:
    """opencode's `GET /mcp`: {name: {status, error?}}."""
    statuses = _statuses(context, servers_for(context))
    return {name: {k: v for k, v in status.items() if k != "tools"} for name, status in statuses.items()}


def _auth_state(context, server: Server) -> str:
    if server.config is None or not configs.uses_oauth(server.config):
        return "none"
    return "authenticated" if access_token(context.user, server.name) else "unauthenticated"


def server_status(*, context, name: str) -> dict:
    server = server_get(context, name)
    status = _statuses(context, {name: server})[name]
    return {k: v for k, v in status.items() if k != "tools"}


def server_list(*, context) -> list[dict]:
    servers = servers_for(context)
    statuses = _statuses(context, servers)
    return [{**server.describe(), **statuses[name], "auth": _auth_state(context, server)}
            for name, server in servers.items()]


# ---- services -----------------------------------------------------------------------------------------

def server_create(*, context, name: str, config: dict) -> dict:
    """Add (or replace) a runtime server for the caller in the context's project, then report its status."""
    name = configs.check_name(name)
    clean = configs.normalize(config)
    refused = policy_for(context.user).mcp_refused_by(clean)
    if refused:
        raise mcp_refusal(name, refused)
    with transaction.atomic():
        store.runtime_server_stored(user=context.user, project_id=context.project_id, name=name,
                                    ciphertext=crypto.encrypt_json(clean))
        record(action="mcp.added", object_type="mcp", object_id=name,
               details={"project": context.project_id, "config": clean})  # its env and headers: redacted
    forget_connections(context, name)
    events.publish_context("mcp.tools.changed", {"server": name}, context)
    server = _confined(context, Server(name, clean, None, "runtime"))
    status = _statuses(context, {name: server})[name]
    return {**server.describe(), **status, "auth": _auth_state(context, server)}


def forget_connections(context, name: str) -> None:
    """Drop this worker's cached connections to `name` (its config or credentials changed)."""
    async def run(user_id: int, server_name: str) -> None:
        await client.disconnect(user_id=user_id, name=server_name)

    try:
        _call(run, context.user.pk, name, timeout=10)
    except Exception:  # noqa: BLE001 - a stale cached connection only delays the new config
        log.warning("could not drop cached MCP connections of %s", name)


# ---- prompts, resources, tools --------------------------------------------------------------------------

def _connected(context, name: str) -> client.Target:
    server = server_get(context, name)
    if server.config is None:
        raise Conflict(f"MCP server {name} has an invalid config: {server.error}")
    if not server.enabled:
        raise Conflict(f"MCP server {name} is disabled")
    return target_of(context, server)


def _run(target: client.Target, call, *, timeout: float = client.REQUEST_SECONDS):
    async def run():
        return await client.request(target, call, timeout=timeout)

    try:
        return _call(run, timeout=timeout + client.CONNECT_SECONDS + 5)
    # The request was fine; the server it names could not serve it as it is now (not a 5xx: ours did not fail).
    except client.McpFailure as failure:
        raise Conflict(f"MCP server {target.name}: {failure}") from None
    except Exception as error:  # noqa: BLE001 - the loop did not answer in time: still a client-visible error
        raise Conflict(f"MCP server {target.name}: {type(error).__name__}") from None


async def _gather_lists(targets: list[client.Target], method: str) -> list:
    async def one(target):
        try:
            return await client.request(target, lambda s: getattr(s, method)(), timeout=target.timeout(5.0))
        except client.McpFailure:
            return None
    return list(await asyncio.gather(*(one(t) for t in targets)))


def _each_connected(context, method: str, config: dict | None = None) -> list[tuple[client.Target, object]]:
    """(target, result of `method`) for every enabled server that answers; the others are skipped."""
    servers = [s for s in servers_for(context, config).values() if s.enabled]
    if not servers:
        return []
    targets = [target_of(context, s) for s in servers]
    try:
        results = _call(_gather_lists, targets, method, timeout=client.CONNECT_SECONDS + 15)
    except Exception:  # noqa: BLE001
        log.warning("MCP %s timed out", method)
        return []
    return [(t, r) for t, r in zip(targets, results) if r is not None]


def prompt_wire(server: str, prompt) -> dict:
    out = {"name": prompt.name, "client": server, "server": server,
           "arguments": [{"name": a.name, "required": bool(a.required),
                          **({"description": a.description} if a.description else {})}
                         for a in (prompt.arguments or [])]}
    if prompt.description:
        out["description"] = prompt.description
    return out


def prompt_list(*, context) -> list[dict]:
    return [prompt_wire(target.name, p) for target, result in _each_connected(context, "list_prompts")
            for p in result.prompts]


def prompts_for(context) -> list[dict]:
    """MCP prompts as commands (source "mcp"), for the command list. Each has `server`, `prompt` and the
    argument names; the template comes from `prompt_render(context=, server=, name=, arguments=)`."""
    out = []
    for item in prompt_list(context=context):
        out.append({
            "name": f"{configs.sanitize(item['server'])}:{configs.sanitize(item['name'])}",
            "description": item.get("description", ""), "source": "mcp", "server": item["server"],
            "prompt": item["name"], "arguments": [a["name"] for a in item["arguments"]],
            "hints": [f"${i + 1}" for i in range(len(item["arguments"]))],
        })
    return out


def _content_text(content) -> str:
    kind = getattr(content, "type", None)
    if kind == "text":
        return content.text
    if kind == "resource":
        return getattr(content.resource, "text", "") or ""
    return ""


def prompt_render(*, context, server: str, name: str, arguments: dict | None = None) -> dict:
    target = _connected(context, server)
    result = _run(target, lambda s: s.get_prompt(name, arguments or {}))
    messages = [{"role": m.role, "content": m.content.model_dump(mode="json", by_alias=True, exclude_none=True)}
                for m in result.messages]
    out = {"messages": messages, "text": "\n\n".join(t for t in (_content_text(m.content) for m in result.messages)
                                                     if t)}
    if result.description:
        out["description"] = result.description
    return out


def resource_list(*, context) -> list[dict]:
    out = []
    for target, result in _each_connected(context, "list_resources"):
        for resource in result.resources:
            item = {"name": resource.name, "uri": str(resource.uri), "client": target.name}
            if resource.description:
                item["description"] = resource.description
            if resource.mime_type:
                item["mimeType"] = resource.mime_type
            out.append(item)
    return out


def _key_part(value: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", value)


def resource_map(*, context) -> dict[str, dict]:
    """experimental.resource.list: the resources of the connected servers keyed `<server>:<resource name>`
    (sanitized) as opencode keys them; an unreachable server must not break the TUI's start-up."""
    try:
        listed = resource_list(context=context)
    except Exception:  # noqa: BLE001
        log.exception("listing MCP resources")
        return {}
    return {f"{_key_part(item['client'])}:{_key_part(item['name'])}": item for item in listed}


def resource_read(*, context, server: str, uri: str) -> dict:
    target = _connected(context, server)
    result = _run(target, lambda s: s.read_resource(uri))
    return {"contents": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents]}


def connected_tools(context, config: dict | None = None) -> list[tuple[client.Target, object]]:
    """Every tool of every connected server in this context, with the server it belongs to (the agent
    wraps each as one of its tools: sessions_app.mcp_tools)."""
    try:
        listed = _each_connected(context, "list_tools", config)
    except Exception:  # noqa: BLE001 - MCP trouble never stops a turn
        log.exception("listing MCP tools")
        return []
    return [(target, tool) for target, result in listed for tool in result.tools]
