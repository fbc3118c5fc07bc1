"""Projects: the wire shape, the reads (always scoped to the caller) and the one write (project_update).

A project is per owner: alice's and bob's clones of one repository are two rows with the same project id."""
from __future__ import annotations

import os

from django.db import transaction

from agentserver.context import RuntimeContext
from agentserver.errors import NotFound
from agentserver.events import publisher as events
from agentserver.paths import within_any
from auth_app.tokens import roots_of
from projects_app import store, workspaces
from projects_app.models import Project, now_ms


def _commands_map(commands) -> dict:
    """Stored as {name: command}; v1 clients send {"start": "..."}, v2 clients [{name, command}]."""
    if isinstance(commands, dict):
        return {str(k): v for k, v in commands.items() if isinstance(v, str)}
    if isinstance(commands, list):
        return {item["name"]: item["command"] for item in commands if isinstance(item, dict) and "name" in item}
    return {}


def project_wire(project: Project) -> dict:
    """Reference §3.1: {id, worktree, vcs?, name?, icon?, commands?, time{created, updated, initialized?}, sandboxes}."""
    body: dict = {"id": project.project_id, "worktree": project.worktree}
    if project.vcs:
        body["vcs"] = project.vcs
    if project.name is not None:
        body["name"] = project.name
    if project.icon:
        body["icon"] = project.icon
    start = _commands_map(project.commands).get("start")
    if start is not None:  # 1.18's ProjectCommands knows only `start`; the v2 list below has every command
        body["commands"] = {"start": start}
    time = {"created": project.time_created, "updated": project.time_updated}
    if project.time_initialized is not None:
        time["initialized"] = project.time_initialized
    body["time"] = time
    body["sandboxes"] = []
    return body


def project_wire_v2(project: Project) -> dict:
    """The v2 mount: icon is a string and commands a list of {name, command}."""
    body = project_wire(project)
    icon = project.icon or {}
    body.pop("icon", None)
    value = icon.get("override") or icon.get("url")
    if value:
        body["icon"] = value
    body["commands"] = [{"name": name, "command": command} for name, command in _commands_map(project.commands).items()]
    return body


def project_list(*, user) -> list[Project]:
    return store.projects_of(user)


def project_get(*, user, project_id: str) -> Project:
    project = store.project_find(user=user, project_id=project_id)
    if project is None:
        raise NotFound(f"Project not found: {project_id}", projectID=project_id)
    return project


def project_find(*, user, project_id: str) -> Project | None:
    """The user's project of that id, None when there is none."""
    return store.project_find(user=user, project_id=project_id)


def project_mark_initialized(project: Project) -> Project:
    """`time.initialized` set now (the `init` command ran), and the project read again."""
    return store.project_initialized(project)


def project_of(context: RuntimeContext) -> Project:
    """The project a runtime context names, created on first use (as opencode's instance boot does)."""
    project, created = store.project_found_or_made(
        user=context.user, project_id=context.project_id, worktree=context.worktree if context.vcs else "/",
        vcs=context.vcs)
    if created:
        # As opencode when it first sees a project: clients holding the project list (the web app's sidebar
        # and review panel) learn of it on the global stream.
        events.publish("project.updated", project_wire(project), owner_id=context.user.pk,
                       project_id=context.project_id)
    return project


def project_current(*, context: RuntimeContext) -> Project:
    """The project of the resolved runtime context, created on first use."""
    return project_of(context)


def project_directories(*, user, project_id: str) -> list[dict]:
    """Directories of the project the user may open: its worktree (for the non-git `global` project, the
    user's allowed roots), then its registered, unarchived workspaces that exist."""
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


@transaction.atomic
def project_update(*, user, project_id: str, name=..., icon=..., commands=..., directory: str | None = None) -> Project:
    """Arguments left as `...` are unchanged. `icon` is merged key by key (a v2 string sets icon.override)."""
    project = store.project_locked(user=user, project_id=project_id)
    if project is None:
        raise NotFound(f"Project not found: {project_id}", projectID=project_id)
    if name is not ...:
        project.name = name
    if icon is not ...:
        if icon is None:
            project.icon = None
        elif isinstance(icon, str):
            project.icon = {**(project.icon or {}), "override": icon}
        else:
            project.icon = {**(project.icon or {}), **icon}
    if commands is not ...:
        project.commands = _commands_map(commands) if commands is not None else None
    project.time_updated = now_ms()
    store.project_saved(project)
    events.publish("project.updated", project_wire(project), owner_id=user.pk,
                   directory=directory or (project.worktree if project.vcs else None), project_id=project.project_id)
    return project
