"""mcp.connect / mcp.disconnect / mcp.auth.authenticate (opencode 1.18's original /mcp/{name}/… routes).

opencode keeps connect/disconnect in the memory of one instance. Here any worker may serve the next request,
so the switch is stored: a runtime server's `enabled` flag in its row, a config server's as the user's
override `{mcp: {name: {enabled}}}` for the project (the config file stays untouched). Disconnect drops
this worker's cached connection at once; the others see the flag on their next use."""
from __future__ import annotations

from django.db import transaction

from agentserver.errors import ApiError
from agentserver.events import publisher as events
from audit_app.log import record
from auth_app import crypto
from policy_app.config_layer import mcp_refusal
from projects_app.config import config_override_merge
from providers_app import store
from providers_app.mcp import configs, oauth, registry


class McpUnsupportedOAuth(ApiError):
    status = 409
    name = "McpUnsupportedOAuthError"


def _set_enabled(context, name: str, enabled: bool) -> None:
    server = registry.server_get(context, name)
    if enabled and server.refused_by:
        raise mcp_refusal(name, server.refused_by)
    with transaction.atomic():
        if server.source == "runtime" and server.config is not None:
            # The stored config, not the resolved one (whose cwd is already made absolute).
            row = store.runtime_server_locked(user=context.user, project_id=context.project_id, name=name)
            row.ciphertext = crypto.encrypt_json({**crypto.decrypt_json(row.ciphertext), "enabled": enabled})
            store.runtime_server_saved(row, fields=["ciphertext"])
        else:
            config_override_merge(context=context, patch={"mcp": {name: {"enabled": enabled}}})
        record(action="mcp.connected" if enabled else "mcp.disconnected", object_type="mcp", object_id=name,
               details={"project": context.project_id, "source": server.source})
    registry.forget_connections(context, name)
    events.publish_context("mcp.tools.changed", {"server": name}, context)


def mcp_connect(*, context, name: str) -> bool:
    _set_enabled(context, name, True)
    return True


def mcp_disconnect(*, context, name: str) -> bool:
    _set_enabled(context, name, False)
    return True


def mcp_authenticate(*, context, name: str) -> dict:
    """opencode opens a browser on its own machine and waits for the redirect. The server cannot open the
    user's browser, so it starts the flow and tells the client where to go with `mcp.browser.open.failed`
    (the event the TUI shows the URL for); the user finishes with POST /mcp/{name}/auth/callback."""
    server = registry.server_get(context, name)
    if server.config is None or not configs.uses_oauth(server.config):
        raise McpUnsupportedOAuth(f"MCP server {name} does not support OAuth", error="unsupported_oauth")
    if registry.access_token(context.user, name):
        return registry.server_status(context=context, name=name)
    started = oauth.oauth_start(context=context, name=name)
    events.publish_context("mcp.browser.open.failed", {"mcpName": name, "url": started["authorizationUrl"]},
                           context)
    return {"status": "needs_auth"}
