"""The sessions' side of workspaces: workspace.warp moves a session into a workspace (or back to its project's
main worktree), and a workspace that goes away (workspace.delete, workspace.sync; projects_app/workspaces.py)
detaches the sessions pinned to it.

workspace.warp re-pins the session to the workspace's directory, keeping its sub-path, updates its
workspaceID / projectID and publishes session.updated; with copyChanges the source's `git diff HEAD` and
untracked files are applied to the target first (the source is left as it was); if they do not apply nothing
moves."""
from __future__ import annotations

import os

from agentserver import paths
from agentserver.errors import Conflict
from agentserver.sandbox import launcher as sandbox
from auth_app.tokens import roots_of
from projects_app import workspace_git as git
from projects_app.contexts import git_info
from projects_app.models import Workspace
from projects_app.projects import project_find
from projects_app.workspaces import workspace_at, workspace_get, workspace_touch
from sessions_app.models import Session
from sessions_app.selectors import session_get
from sessions_app.store.sessions import pinned_to_workspace, session_pin


class WorkspaceWarpError(Conflict):
    """Well-formed, but the session, its project or the target as they are now do not allow the move."""
    name = "WorkspaceWarpError"


def sessions_detach(*, user, workspace_id: str) -> int:
    """The user's sessions pinned to a workspace that is gone stay where they are, outside any workspace.
    Registered with projects_app.workspaces.on_removal (SessionsAppConfig.ready); returns how many."""
    detached = 0
    for session in pinned_to_workspace(user=user, workspace_id=workspace_id):
        session_pin(session=session, directory=session.directory, workspace_id=None,
                    project_id=session.project_id, path=session.path)
        detached += 1
    return detached


def _target_directory(user, session: Session, workspace: Workspace | None) -> tuple[str, str | None]:
    """(directory, workspace id) a warp moves the session to, keeping its sub-path when it exists there."""
    if workspace is not None:
        top = workspace.directory
    else:
        project = project_find(user=user, project_id=session.project_id)
        if project is None or not project.vcs or not os.path.isdir(project.worktree):
            raise WorkspaceWarpError("The session's project has no main directory to return to")
        top = project.worktree
    candidate = os.path.join(top, session.path) if session.path else top
    directory = candidate if os.path.isdir(candidate) else top
    if not os.path.isdir(directory):
        raise WorkspaceWarpError(f"Target directory does not exist: {directory}")
    return os.path.realpath(directory), workspace.id if workspace else None


@sandbox.on_behalf
def workspace_warp(*, user, session_id: str, workspace_id: str | None,
                   copy_changes: bool) -> tuple[Session, dict | None]:
    """Move a session into a workspace (or, with no workspace id, out of it to the project's main worktree).
    Returns the session and what copyChanges copied."""
    session = session_get(user=user, session_id=session_id)
    workspace = workspace_get(user=user, workspace_id=workspace_id) if workspace_id else None
    if workspace is None and not session.workspace_id:
        raise WorkspaceWarpError("The session is not in a workspace; pass workspaceID to move it into one")
    directory, new_workspace_id = _target_directory(user, session, workspace)
    bases = roots_of(user) + ([workspace.directory] if workspace and workspace.created_by_server else [])
    paths.confine(directory, bases)
    worktree, project_id, vcs = git_info(directory, user=user)
    copied = None
    if copy_changes:
        source_top = git.toplevel(session.directory) if os.path.isdir(session.directory) else None
        if not source_top or not vcs:
            raise WorkspaceWarpError("copyChanges needs git repositories on both sides")
        if source_top != worktree:
            try:
                copied = git.copy_uncommitted(source_top, worktree)
            except git.GitFailed as error:
                raise WorkspaceWarpError(f"Uncommitted changes do not apply to the target: {error}") from error
    rel = os.path.relpath(directory, worktree) if vcs else ""
    session = session_pin(session=session, directory=directory, workspace_id=new_workspace_id,
                          project_id=project_id, path="" if rel == "." else rel)
    if workspace is not None:
        workspace_touch(workspace)
    return session, copied


def session_move(*, user, session_id: str, destination: str, move_changes: bool = False) -> Session:
    """1.18's experimental.controlPlane.moveSession, without a cloud: a session moves within its project, into
    the workspace whose directory is `destination` or back to the project's main worktree (workspace_warp).
    Any other directory is refused, saying so."""
    session = session_get(user=user, session_id=session_id)
    real = os.path.realpath(destination) if os.path.isabs(destination) else destination
    workspace = workspace_at(user=user, directory=real, project_id=session.project_id)
    if workspace is not None:
        return workspace_warp(user=user, session_id=session_id, workspace_id=workspace.id,
                              copy_changes=move_changes)[0]
    project = project_find(user=user, project_id=session.project_id)
    if project is not None and session.workspace_id and real == project.worktree:
        return workspace_warp(user=user, session_id=session_id, workspace_id=None, copy_changes=move_changes)[0]
    raise WorkspaceWarpError(f"{destination} is neither a workspace of the session's project nor (for a session in "
                             "a workspace) its main worktree: this server moves sessions only within their project")
