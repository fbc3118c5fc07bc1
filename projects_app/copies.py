"""Project copies (opencode's `projectCopy`): a copy of a project in a directory of the caller's, made the one
way this server makes copies, a git worktree on its own branch, and kept as a workspace of the project (so
workspace.list and a session's warp see it). Generating a copy's name needs no model: it is the task's words."""
from __future__ import annotations

import os
import re

from django.db import transaction

from agentserver import ids, paths
from agentserver.context import RuntimeContext
from agentserver.errors import BadRequest, Conflict, NotFound
from agentserver.sandbox import launcher as sandbox
from auth_app.tokens import roots_of
from projects_app import store
from projects_app import workspace_git as git
from projects_app.models import Project, Workspace
from projects_app.projects import project_get, project_of
from projects_app.workspaces import (
    publish_workspace,
    workspace_delete,
    workspace_sync,
    worktree_slug,
)

STRATEGIES = ("worktree",)
NAME_WORDS = 4


def copy_name(*, context: str | None) -> str:
    """experimental.projectCopy.generateName: the first few words of the task, as a branch-safe slug."""
    words = re.findall(r"[A-Za-z0-9]+", (context or "").lower())[:NAME_WORDS]
    return worktree_slug("-".join(words) or "copy")


def copy_project(*, context: RuntimeContext, project_id: str) -> Project:
    """The caller's project a copy route names (404 for any other)."""
    if project_id == context.project_id:
        return project_of(context)
    return project_get(user=context.user, project_id=project_id)


@sandbox.on_behalf
def copy_create(*, context: RuntimeContext, project_id: str, strategy: str, directory: str,
                name: str | None = None) -> dict:
    """A git worktree of the project at `directory` (inside the caller's roots, not there yet), on a new branch
    copy/<name>: {directory}."""
    user = context.user
    project = copy_project(context=context, project_id=project_id)
    if strategy not in STRATEGIES:
        raise BadRequest(f"Unknown copy strategy {strategy!r}: this server makes copies as git worktrees "
                         f"(strategy \"worktree\")", kind="Body",
                         issues=[{"path": ["strategy"], "message": "worktree"}])
    if project.vcs != "git" or not os.path.isdir(project.worktree):
        raise Conflict(f"Project {project_id} is not a git repository on this server")
    target = paths.confine(directory, roots_of(user))
    if os.path.lexists(target):
        raise Conflict(f"Directory already exists: {directory}", directory=directory)
    slug = worktree_slug(name or os.path.basename(target))
    branch = f"copy/{slug}"
    if git.branch_exists(project.worktree, branch):
        raise Conflict(f"Branch already exists: {branch}", branch=branch)
    try:
        git.worktree_add(project.worktree, target, branch)
    except git.GitFailed as error:
        raise Conflict(f"Cannot make the copy: {error}") from error
    workspace = Workspace(id=ids.ascending("wrk"), owner=user, project=project, type="worktree", name=name or slug,
                          directory=os.path.realpath(target), branch=branch, metadata={"projectCopy": True},
                          created_by_server=True)
    with transaction.atomic():
        store.workspace_inserted(workspace)
    publish_workspace(workspace, "workspace.created")
    return {"directory": workspace.directory}


def copy_remove(*, context: RuntimeContext, project_id: str, directory: str, force: bool = False) -> None:
    """Remove a copy made by copy_create: its worktree and its registration. Without `force`, a copy with
    uncommitted changes is kept (409)."""
    user = context.user
    project = copy_project(context=context, project_id=project_id)
    real = os.path.realpath(directory) if os.path.isabs(directory) else directory
    workspace = store.server_copy_at(user=user, project=project, directory=real)
    if workspace is None:
        raise NotFound(f"No copy of project {project_id} at {directory}", directory=directory)
    if not force and os.path.isdir(workspace.directory) and _has_changes(user, workspace.directory):
        raise Conflict(f"The copy at {directory} has uncommitted changes; pass force to remove it anyway",
                       directory=directory)
    workspace_delete(user=user, workspace_id=workspace.id, remove_files=True)


def _has_changes(user, directory: str) -> bool:
    out = sandbox.run(user, ["git", "status", "--porcelain"], cwd=directory, timeout=30, offline=True,
                      env={"GIT_OPTIONAL_LOCKS": "0"})
    return out.returncode != 0 or bool(out.stdout.strip())


def copy_refresh(*, context: RuntimeContext, project_id: str) -> None:
    """Bring the caller's workspaces (copies among them) in line with the disk: vanished ones go."""
    copy_project(context=context, project_id=project_id)
    workspace_sync(user=context.user)
