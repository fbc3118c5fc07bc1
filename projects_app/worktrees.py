"""opencode 1.18's /experimental/worktree (worktree.list/create/remove/reset) over the workspace services:
a worktree here is a git-worktree workspace the server created for the context's project.

create: a new worktree on branch `opencode/<name>` (the reference's naming); the project's `commands.start`
and then `startCommand` run in it afterwards, in the user's sandbox, in a background thread, and the client
hears `worktree.ready` or `worktree.failed`. remove: the worktree's files and its registration.
reset: the worktree back to the main worktree's HEAD commit, uncommitted and untracked files dropped."""
from __future__ import annotations

import logging
import os
import threading

from django.db import connections

from agentserver.context import RuntimeContext
from agentserver.errors import Conflict, NotFound
from agentserver.events import publisher as events
from agentserver.sandbox import launcher as sandbox
from projects_app import workspace_git as git
from projects_app import workspaces
from projects_app.models import Workspace

log = logging.getLogger(__name__)
START_COMMAND_TIMEOUT = 600


# The directory or repository as it is now refuses these (409), as workspaces.WorkspaceCreateError.
class WorktreeNotGit(Conflict):
    name = "WorktreeNotGitError"


class WorktreeResetFailed(Conflict):
    name = "WorktreeResetFailedError"


def _require_git(context: RuntimeContext) -> None:
    if context.vcs != "git":
        raise WorktreeNotGit(f"Not a git repository: {context.directory}")


def _server_worktrees(context: RuntimeContext):
    return workspaces.workspace_list(user=context.user, project_id=context.project_id).filter(
        type="worktree", created_by_server=True, archived=False)


@sandbox.on_behalf
def worktree_list(*, context: RuntimeContext) -> list[str]:
    _require_git(context)
    return [w.directory for w in _server_worktrees(context) if os.path.isdir(w.directory)]


def worktree_wire(workspace: Workspace) -> dict:
    out = {"name": workspace.name, "directory": workspace.directory}
    if workspace.branch:
        out["branch"] = workspace.branch
    return out


def _run_start_commands(context: RuntimeContext, workspace: Workspace, commands: list[str]) -> None:
    def publish(type_: str, properties: dict) -> None:
        events.publish(type_, properties, owner_id=context.user.pk, directory=workspace.directory,
                       workspace_id=workspace.id, project_id=context.project_id)

    try:
        failure = _first_failure(context, workspace, commands)
        if failure:
            publish("worktree.failed", {"message": failure})
        else:
            publish("worktree.ready", {"name": workspace.name, "branch": workspace.branch or ""})
    finally:
        connections.close_all()  # this thread's own connections


def _first_failure(context: RuntimeContext, workspace: Workspace, commands: list[str]) -> str | None:
    failure = None
    for command in commands:
        try:
            result = sandbox.run(context.user, ["sh", "-c", command], cwd=workspace.directory,
                                 timeout=START_COMMAND_TIMEOUT)
        except Exception as error:  # noqa: BLE001 - a timeout or a missing sandbox is reported, not raised
            failure = f"{command}: {error}"
            break
        if result.returncode != 0:
            failure = f"{command}: exit {result.returncode}: {result.stderr.decode(errors='replace')[-500:]}"
            break
    return failure


@sandbox.on_behalf
def worktree_create(*, context: RuntimeContext, name: str | None = None,
                    start_command: str | None = None) -> Workspace:
    _require_git(context)
    slug = workspaces.worktree_slug(name) if name else None
    workspace = workspaces.workspace_create(user=context.user, type="worktree", project_id=context.project_id,
                                            directory=context.worktree, name=slug,
                                            branch=f"opencode/{slug}" if slug else None)
    project_start = (workspace.project.commands or {}).get("start") if workspace.project_id else None
    commands = [c for c in (project_start, start_command) if isinstance(c, str) and c.strip()]
    # The start commands may take minutes: the client hears how they ended from the events.
    threading.Thread(target=_run_start_commands, args=(context, workspace, commands), daemon=True,
                     name=f"worktree-start-{workspace.id}").start()
    return workspace


def _worktree_at(context: RuntimeContext, directory: str) -> Workspace:
    _require_git(context)
    real = os.path.realpath(directory)
    for workspace in _server_worktrees(context):
        if workspace.directory == real:
            return workspace
    raise NotFound(f"Worktree not found: {directory}")


@sandbox.on_behalf
def worktree_remove(*, context: RuntimeContext, directory: str) -> bool:
    workspace = _worktree_at(context, directory)
    workspaces.workspace_delete(user=context.user, workspace_id=workspace.id, remove_files=True)
    return True


@sandbox.on_behalf
def worktree_reset(*, context: RuntimeContext, directory: str) -> bool:
    workspace = _worktree_at(context, directory)
    if not os.path.isdir(workspace.directory):
        raise NotFound(f"Worktree not found: {directory}")
    base = git.head_commit(context.worktree)
    if base is None:
        raise WorktreeResetFailed(f"The main worktree has no commit to reset to: {context.worktree}")
    try:
        git.run(workspace.directory, "reset", "--hard", "--quiet", base)
        git.run(workspace.directory, "clean", "-fdq")
    except git.GitFailed as error:
        raise WorktreeResetFailed(str(error)) from error
    return True
