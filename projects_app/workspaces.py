"""Workspaces (v2 workspace.*): directories registered for work, or git worktrees the server creates.

Meanings we give to the operations the spec leaves open (api.md §4.2 item 12):
- workspace.status: one entry per workspace of the caller: {workspaceID, status} as opencode 1.18 reports it
  ("connected" when the directory exists, "disconnected" when it vanished, "error" when git cannot read it),
  plus the facts a client can act on: directory, exists, branch, dirty (changed + untracked file count),
  ahead/behind (against the branch's upstream, or else the branch checked out in the project's main worktree).
- workspace.sync: reconcile registrations with the disk: registrations whose directory vanished are removed
  (their sessions detached), `git worktree prune` runs in each project repository, branches are refreshed, and
  git worktrees of the caller's projects that lie inside the caller's roots but are not registered yet are
  registered (type "worktree", as 1.18's sync-list registers what its adapters find).
- workspace.warp moves a session, and is the sessions' use case (sessions_app/services/workspaces.py).
- workspace.delete removes the registration only. `removeFiles=true` also removes the files, and is accepted
  only for worktrees the server created (`createdByServer`); the response says what was removed.
When a registration goes (delete, sync), what the apps above pinned to it is released through the releasers
they register at start-up (`on_removal`): sessions_app detaches its sessions."""
from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from agentserver import ids, paths
from agentserver.errors import BadRequest, Conflict, NotFound
from agentserver.events import publisher as events
from agentserver.sandbox import launcher as sandbox
from audit_app.log import record
from auth_app.tokens import roots_of
from projects_app import store
from projects_app import workspace_git as git
from projects_app.contexts import GLOBAL_PROJECT, git_info
from projects_app.models import Project, Workspace, now_ms

REGISTER_TYPES = ("directory", "local")
WORKTREE_TYPES = ("worktree",)


class WorkspaceCreateError(Conflict):
    """Well-formed, but the project or repository as it is now does not allow it (no git, a taken branch)."""
    name = "WorkspaceCreateError"


# The branch names a new worktree takes: words joined by single dots or dashes, in slash-separated parts
# (a subset of git's ref names that a pattern can state exactly; /doc states it).
BRANCH_PATTERN = r"^[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*(?:/[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*)*$"


# `release(user=, workspace_id=) -> int`: how many things pinned to the workspace it let go.
_releasers: list[Callable[..., int]] = []


def on_removal(release: Callable[..., int]) -> None:
    """Have `release` called after a workspace's registration is removed (SessionsAppConfig.ready)."""
    if release not in _releasers:
        _releasers.append(release)


def _release(user, workspace_id: str) -> int:
    return sum(release(user=user, workspace_id=workspace_id) for release in _releasers)


# ---- wire ----------------------------------------------------------------------------------------------

def workspace_wire(workspace: Workspace) -> dict:
    """1.18's Workspace {id, type, name, branch, directory, extra, projectID, timeUsed} plus our metadata,
    archived, createdByServer and time."""
    return {
        "id": workspace.id,
        "type": workspace.type,
        "name": workspace.name,
        "branch": workspace.branch,
        "directory": workspace.directory,
        "extra": workspace.metadata or None,
        "projectID": workspace.project.project_id if workspace.project_id else GLOBAL_PROJECT,
        "timeUsed": workspace.time_updated,
        "metadata": workspace.metadata,
        "archived": workspace.archived,
        "createdByServer": workspace.created_by_server,
        "time": {"created": workspace.time_created, "updated": workspace.time_updated},
    }


def publish_workspace(workspace: Workspace, type_: str) -> None:
    events.publish(type_, {"workspaceID": workspace.id, "info": workspace_wire(workspace)},
                   owner_id=workspace.owner_id, directory=workspace.directory, workspace_id=workspace.id,
                   project_id=workspace.project.project_id if workspace.project_id else None)


# ---- selectors -----------------------------------------------------------------------------------------

def workspace_list(*, user, project_id: str | None = None) -> QuerySet:
    return store.workspaces_of(user=user, project_id=project_id)


def workspace_get(*, user, workspace_id: str) -> Workspace:
    workspace = store.workspace_of(user=user, workspace_id=workspace_id)
    if workspace is None:
        raise NotFound(f"Workspace not found: {workspace_id}")
    return workspace


def workspace_at(*, user, directory: str, project_id: str) -> Workspace | None:
    """The user's workspace of the project registered at `directory`."""
    return store.workspace_at(user=user, directory=directory, project_id=project_id)


def workspace_touch(workspace: Workspace) -> None:
    """`time.updated` set now (a session moved in)."""
    store.workspace_touched(workspace)


# ---- create --------------------------------------------------------------------------------------------

def _project_for(user, directory: str) -> Project:
    worktree, project_id, vcs = git_info(directory, user=user)
    project, _ = store.project_found_or_made(user=user, project_id=project_id, worktree=worktree if vcs else "/",
                                             vcs=vcs)
    return project


def worktree_slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60] or f"wt-{secrets.token_hex(3)}"


def _worktree_location(user, project: Project, slug: str) -> str:
    """Beside the repository (<parent>/.worktrees/<repo>/<slug>) when that is inside the user's roots,
    else under SHARED_DIR/worktrees/<user id>/<project id>/<slug>."""
    parent = os.path.dirname(project.worktree)
    roots = roots_of(user)
    if parent and paths.within_any(parent, roots):
        base = os.path.join(parent, ".worktrees", os.path.basename(project.worktree))
    else:
        base = os.path.join(str(settings.SHARED_DIR), "worktrees", str(user.pk), project.project_id[:16])
    target = os.path.join(base, slug)
    suffix = 1
    while os.path.lexists(target):
        suffix += 1
        target = os.path.join(base, f"{slug}-{suffix}")
    return target


def _source_project(user, project_id: str | None, directory: str | None) -> Project:
    if directory:
        real = paths.confine(directory, roots_of(user))
        if not os.path.isdir(real):
            raise BadRequest(f"Directory does not exist: {directory}")
        project = _project_for(user, real)
        if project_id and project.project_id != project_id:
            raise BadRequest(f"Directory {directory} does not belong to project {project_id}")
        return project
    if not project_id:
        raise BadRequest("A worktree workspace needs projectID or directory",
                         issues=[{"path": ["projectID"], "message": "required"}])
    project = store.project_find(user=user, project_id=project_id)
    if project is None:
        raise NotFound(f"Project not found: {project_id}")
    return project


@sandbox.on_behalf
def workspace_create(*, user, type: str, project_id: str | None = None, name: str | None = None,
                     directory: str | None = None, metadata: dict | None = None,
                     branch: str | None = None) -> Workspace:
    """Register an existing directory (type "directory"/"local") or create a git worktree (type "worktree")
    on a new branch (`branch`, default workspace/<name>)."""
    if type in REGISTER_TYPES:
        if not directory:
            if not project_id:
                raise BadRequest("directory is required", issues=[{"path": ["directory"], "message": "required"}])
            project = _source_project(user, project_id, None)
            if not project.vcs:
                raise BadRequest(f"Project {project_id} has no directory of its own; pass directory")
            directory = project.worktree
        real = paths.confine(directory, roots_of(user))
        if not os.path.isdir(real):
            raise BadRequest(f"Directory does not exist: {directory}")
        project = _project_for(user, real)
        if project_id and project.project_id != project_id:
            raise BadRequest(f"Directory {directory} does not belong to project {project_id}")
        workspace = Workspace(
            id=ids.ascending("wrk"), owner=user, project=project, type=type, name=name or os.path.basename(real),
            directory=real, branch=git.current_branch(real) if project.vcs else None, metadata=metadata or {},
        )
        with transaction.atomic():
            store.workspace_inserted(workspace)
        publish_workspace(workspace, "workspace.created")
        return workspace
    if type not in WORKTREE_TYPES:
        raise BadRequest(f"Unknown workspace type {type!r}: use one of {', '.join(REGISTER_TYPES + WORKTREE_TYPES)}",
                         issues=[{"path": ["type"], "message": "unknown workspace type"}])

    project = _source_project(user, project_id, directory)
    if project.vcs != "git" or not os.path.isdir(project.worktree):
        raise WorkspaceCreateError(f"Project {project.project_id} is not a git repository on this server")
    repo = paths.confine(project.worktree, roots_of(user))
    slug = worktree_slug(name or f"wt-{secrets.token_hex(3)}")
    branch = branch or f"workspace/{slug}"
    if not git.valid_branch_name(repo, branch):
        raise BadRequest(f"Invalid branch name: {branch}", issues=[{"path": ["branch"], "message": "invalid"}])
    if git.branch_exists(repo, branch):
        raise WorkspaceCreateError(f"Branch already exists: {branch}")
    target = _worktree_location(user, project, slug)
    try:
        git.worktree_add(repo, target, branch)
    except git.GitFailed as error:
        raise WorkspaceCreateError(str(error)) from error
    workspace = Workspace(
        id=ids.ascending("wrk"), owner=user, project=project, type=type, name=name or slug,
        directory=os.path.realpath(target), branch=branch, metadata=metadata or {}, created_by_server=True,
    )
    try:
        with transaction.atomic():
            store.workspace_inserted(workspace)
            record(action="worktree.created", object_type="workspace", object_id=workspace.id,
                   details={"directory": workspace.directory, "branch": branch, "project": project.project_id})
    except Exception:
        git.worktree_remove(repo, target)
        raise
    publish_workspace(workspace, "workspace.created")
    return workspace


# ---- update / delete -----------------------------------------------------------------------------------

@sandbox.on_behalf
def workspace_update(*, user, workspace_id: str, name: str | None = None, metadata: dict | None = None,
                     archived: bool | None = None) -> Workspace:
    with transaction.atomic():
        workspace = workspace_get(user=user, workspace_id=workspace_id)
        if name is not None:
            workspace.name = name
        if metadata is not None:
            workspace.metadata = metadata
        if archived is not None:
            workspace.archived = archived
        workspace.time_updated = now_ms()
        store.workspace_saved(workspace)
    publish_workspace(workspace, "workspace.updated")
    return workspace


@sandbox.on_behalf
def workspace_delete(*, user, workspace_id: str, remove_files: bool = False) -> dict:
    """Remove the registration; with remove_files, also the worktree the server created (never other files).
    Returns the workspace's wire shape plus {"removed": {"registration", "files", "sessionsDetached"}}."""
    workspace = workspace_get(user=user, workspace_id=workspace_id)
    if remove_files and not workspace.created_by_server:
        # A well-formed request the workspace's kind refuses: a conflict with its state, not bad input.
        raise Conflict("removeFiles is only allowed for worktrees the server created; "
                       "this workspace registers a directory of yours")
    body = workspace_wire(workspace)
    files_removed = False
    if remove_files and os.path.isdir(workspace.directory):
        repo = workspace.project.worktree if workspace.project_id else workspace.directory
        git.worktree_remove(repo, workspace.directory)
        files_removed = not os.path.exists(workspace.directory)
    with transaction.atomic():
        store.workspace_deleted(workspace)
        if workspace.created_by_server:
            record(action="worktree.removed", object_type="workspace", object_id=workspace.id,
                   details={"directory": workspace.directory, "branch": workspace.branch, "filesRemoved": files_removed})
    detached = _release(user, workspace_id)
    events.publish("workspace.removed", {"workspaceID": workspace_id, "info": body}, owner_id=user.pk,
                   directory=body["directory"], workspace_id=workspace_id)
    body["removed"] = {"registration": True, "files": files_removed, "sessionsDetached": detached}
    return body


# ---- 1.18's experimental views of the context's project -----------------------------------------------

_WORKSPACE_FIELDS = ("id", "type", "name", "branch", "directory", "extra", "projectID", "timeUsed")


def project_workspaces(*, context) -> list[dict]:
    """experimental.workspace.list: 1.18's Workspace records of the context's project."""
    rows = workspace_list(user=context.user, project_id=context.project_id).filter(archived=False)
    return [{key: wire[key] for key in _WORKSPACE_FIELDS} for wire in (workspace_wire(row) for row in rows)]


ADAPTERS = [
    {"type": "worktree", "name": "Git worktree",
     "description": "A new git worktree of the project on its own branch, made and kept by this server"},
    {"type": "directory", "name": "Directory",
     "description": "A directory of yours already on the server, registered as a workspace of its project"},
    {"type": "local", "name": "Local directory", "description": "The same as directory (opencode's name for it)"},
]


def workspace_adapters() -> list[dict]:
    """experimental.workspace.adapter.list: the kinds of workspace this server makes (no remote adapters)."""
    return [dict(adapter) for adapter in ADAPTERS]


def experimental_wire(workspace: Workspace) -> dict:
    wire = workspace_wire(workspace)
    return {key: wire[key] for key in _WORKSPACE_FIELDS}


def project_workspace_create(*, context, type: str, branch: str | None = None, extra=None) -> dict:
    """experimental.workspace.create: a workspace of the context's project; a directory-kind one registers
    the context's directory."""
    workspace = workspace_create(user=context.user, type=type, directory=context.directory, branch=branch,
                                 metadata=extra if isinstance(extra, dict) else None)
    return experimental_wire(workspace)


def project_workspace_remove(*, context, workspace_id: str) -> dict:
    """experimental.workspace.remove: the registration goes, and a worktree the server made goes with it."""
    workspace = workspace_get(user=context.user, workspace_id=workspace_id)
    wire = experimental_wire(workspace)
    workspace_delete(user=context.user, workspace_id=workspace_id, remove_files=workspace.created_by_server)
    return wire


def project_workspace_status(*, context) -> list[dict]:
    """experimental.workspace.status."""
    rows = workspace_list(user=context.user, project_id=context.project_id).filter(archived=False)
    return [{"workspaceID": status["workspaceID"], "status": status["status"]}
            for status in (workspace_status_of(row) for row in rows)]


# ---- status / sync -------------------------------------------------------------------------------------

def _comparison_base(workspace: Workspace) -> str | None:
    base = git.upstream(workspace.directory)
    if base:
        return base
    if workspace.project_id and workspace.project.worktree != workspace.directory \
            and os.path.isdir(workspace.project.worktree):
        return git.head_commit(workspace.project.worktree)
    return None


def workspace_status_of(workspace: Workspace) -> dict:
    with sandbox.acting_as(workspace.owner):
        return _status_of(workspace)


def _status_of(workspace: Workspace) -> dict:
    entry = {"workspaceID": workspace.id, "id": workspace.id, "directory": workspace.directory,
             "exists": os.path.isdir(workspace.directory), "branch": None, "dirty": None,
             "ahead": None, "behind": None}
    if not entry["exists"]:
        return {**entry, "status": "disconnected"}
    if not git.toplevel(workspace.directory):
        return {**entry, "status": "connected"}
    try:
        entry["branch"] = git.current_branch(workspace.directory)
        entry["dirty"] = git.dirty_count(workspace.directory)
        base = _comparison_base(workspace)
        counts = git.ahead_behind(workspace.directory, base) if base else None
        if counts:
            entry["ahead"], entry["behind"] = counts
    except git.GitFailed:
        return {**entry, "status": "error"}
    return {**entry, "status": "connected"}


@sandbox.on_behalf
def workspace_status(*, user) -> list[dict]:
    return [workspace_status_of(workspace) for workspace in workspace_list(user=user)]


@sandbox.on_behalf
def workspace_sync(*, user) -> dict:
    """Prune vanished registrations, prune git worktrees, refresh branches, register unregistered worktrees.
    Returns {"pruned": [ids], "registered": [wire], "workspaces": [wire]}."""
    pruned: list[str] = []
    for workspace in list(workspace_list(user=user)):
        if os.path.isdir(workspace.directory):
            branch = git.current_branch(workspace.directory)
            if branch != workspace.branch:
                store.workspace_branch_set(workspace, branch)
            continue
        with transaction.atomic():
            store.workspace_deleted(workspace)
        _release(user, workspace.id)
        events.publish("workspace.removed", {"workspaceID": workspace.id, "info": workspace_wire(workspace)},
                       owner_id=user.pk, workspace_id=workspace.id)
        pruned.append(workspace.id)

    registered: list[Workspace] = []
    roots = roots_of(user)
    known = store.workspace_directories_of(user)
    for project in store.git_projects_of(user):
        if not os.path.isdir(project.worktree) or not paths.within_any(project.worktree, roots):
            continue
        git.worktree_prune(project.worktree)
        for path in git.worktree_paths(project.worktree)[1:]:
            if path in known or not os.path.isdir(path) or not paths.within_any(path, roots):
                continue
            workspace = Workspace(id=ids.ascending("wrk"), owner=user, project=project, type="worktree",
                                  name=os.path.basename(path), directory=path, branch=git.current_branch(path))
            with transaction.atomic():
                store.workspace_inserted(workspace)
            publish_workspace(workspace, "workspace.created")
            known.add(path)
            registered.append(workspace)
    return {
        "pruned": pruned,
        "registered": [workspace_wire(w) for w in registered],
        "workspaces": [workspace_wire(w) for w in workspace_list(user=user)],
    }
