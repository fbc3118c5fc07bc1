"""Reads behind the routes opencode's TUI calls at start-up beyond the core API (transcripts `extra.*`):
capabilities, console, project directories, MCP resources, workspaces and their status, references,
integrations, formatter and LSP status. Each answers from real state where the shape implies data."""
from __future__ import annotations

import logging
import os
import re

from projects_app import workspaces
from projects_app.config import effective_config
from projects_app.projects import project_get

log = logging.getLogger(__name__)


def capabilities() -> dict:
    # Subagents run inside the parent's turn here; there are no detached background subagents.
    return {"backgroundSubagents": False}


def console_state() -> dict:
    # No opencode Console (org-managed providers) integration exists on this server.
    return {"consoleManagedProviders": [], "switchableOrgCount": 0}


def project_directories(*, user, project_id: str) -> list[dict]:
    """Directories of the project the user may open: its worktree (for the non-git `global` project, the
    user's allowed roots), then its registered, unarchived workspaces that exist."""
    from agentserver.paths import within_any
    from auth_app.tokens import roots_of

    project = project_get(user=user, project_id=project_id)
    roots = roots_of(user)
    candidates = [project.worktree] if project.vcs else list(roots)
    out = [{"directory": d} for d in candidates if within_any(d, roots) and os.path.isdir(d)]
    seen = {entry["directory"] for entry in out}
    for workspace in workspaces.workspace_list(user=user, project_id=project_id).filter(archived=False):
        usable = workspace.created_by_server or within_any(workspace.directory, roots)
        if usable and workspace.directory not in seen and os.path.isdir(workspace.directory):
            seen.add(workspace.directory)
            out.append({"directory": workspace.directory, "strategy": workspace.type})
    return out


def _mcp_key_part(value: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", value)


def mcp_resources(*, context) -> dict:
    """MCP resources of the connected servers, keyed `<server>:<resource name>` (sanitized) as opencode does."""
    from providers_app.mcp import registry

    try:
        listed = registry.resource_list(context=context)
    except Exception:  # noqa: BLE001 - an unreachable MCP server must not break the TUI's start-up
        log.exception("listing MCP resources")
        return {}
    out = {}
    for item in listed:
        out[f"{_mcp_key_part(item['client'])}:{_mcp_key_part(item['name'])}"] = item
    return out


_WORKSPACE_FIELDS = ("id", "type", "name", "branch", "directory", "extra", "projectID", "timeUsed")


def project_workspaces(*, context) -> list[dict]:
    """1.18's experimental Workspace records of the context's project."""
    rows = workspaces.workspace_list(user=context.user, project_id=context.project_id).filter(archived=False)
    return [{key: wire[key] for key in _WORKSPACE_FIELDS}
            for wire in (workspaces.workspace_wire(row) for row in rows)]


def project_workspace_status(*, context) -> list[dict]:
    rows = workspaces.workspace_list(user=context.user, project_id=context.project_id).filter(archived=False)
    return [{"workspaceID": s["workspaceID"], "status": s["status"]}
            for s in (workspaces.workspace_status_of(row) for row in rows)]


def formatter_status(*, context) -> list[dict]:
    """The directory's formatters (built-in and configured) and whether each would run after an edit."""
    from projects_app import formatters

    return formatters.formatter_status(context=context, config=effective_config(context))


def lsp_status(*, context) -> list[dict]:
    """The language servers this directory's edits started, with their root and state."""
    from projects_app.lsp.service import lsp_status as running

    return running(context=context)


def references(*, context) -> list[dict]:
    """ReferenceInfo from config `reference`: name → `{type: "local", path}` or `{type: "git", repository}`."""
    configured = effective_config(context).get("reference")
    if not isinstance(configured, dict):
        return []
    out = []
    for name, source in configured.items():
        if not isinstance(source, dict) or source.get("type") not in ("local", "git"):
            continue
        if source["type"] == "local" and isinstance(source.get("path"), str):
            path = os.path.normpath(os.path.join(context.worktree if context.vcs else context.directory,
                                                 os.path.expanduser(source["path"])))
        elif source["type"] == "git" and isinstance(source.get("repository"), str):
            path = source["repository"]
        else:
            continue
        info = {"name": name, "path": path, "source": source}
        for key in ("description", "hidden"):
            if key in source:
                info[key] = source[key]
        out.append(info)
    return out


def integrations(*, context) -> list[dict]:
    """IntegrationInfo per provider: how it can be connected (oauth, key, env) and what connects it now."""
    from auth_app.models import AuthAccount
    from providers_app import models_catalog, oauth

    accounts: dict[str, list[dict]] = {}
    for account in AuthAccount.objects.filter(owner=context.user).order_by("service_id", "id"):
        accounts.setdefault(account.service_id, []).append(
            {"type": "credential", "id": account.id, "label": account.description or account.masked})
    out = []
    for provider_id, entry in models_catalog.provider_entries(context).items():
        methods = []
        for index, method in enumerate(oauth.METHODS.get(provider_id, [])):
            if isinstance(method, oauth.OAuthMethod):
                methods.append({"id": str(index), "type": "oauth", "label": method.label})
        methods.append({"type": "key"})
        env_names = [n for n in (entry.record.get("env") or []) if isinstance(n, str)]
        if env_names:
            methods.append({"type": "env", "names": env_names})
        connections = list(accounts.get(provider_id, []))
        connections += [{"type": "env", "name": name} for name in env_names if os.environ.get(name)]
        out.append({"id": provider_id, "name": entry.record.get("name") or provider_id, "methods": methods,
                    "connections": connections})
    return out
