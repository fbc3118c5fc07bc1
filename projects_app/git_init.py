"""project.initGit: make the context's directory a git repository, so it becomes a project of its own.

The first (empty) commit gives the project its id (opencode's project id is the root commit). git runs in
the user's sandbox, like every program run in a user's directory."""
from __future__ import annotations

from agentserver.context import RuntimeContext
from agentserver.errors import BadRequest
from agentserver.events import publisher as events
from agentserver.sandbox import launcher as sandbox
from projects_app.contexts import context_for_directory, forget_git_info
from projects_app.models import Project
from projects_app.projects import project_of, project_wire


class GitInitFailed(BadRequest):
    name = "ProjectInitGitError"


def _git(context: RuntimeContext, *args: str, identity: list[str] | None = None):
    return sandbox.run(context.user, ["git", *(identity or []), *args], cwd=context.directory, timeout=60,
                       offline=True)


def project_init_git(*, context: RuntimeContext) -> Project:
    if context.vcs:
        return project_of(context)
    steps = [("init", "--quiet")]
    identity = []
    if _git(context, "config", "user.email").returncode != 0:
        # No identity in the user's git config: name the commit after the account rather than fail.
        name = context.user.get_username()
        identity = ["-c", f"user.name={name}", "-c", f"user.email={name}@agentserver.invalid"]
    steps.append(("commit", "--quiet", "--allow-empty", "--no-verify", "-m", "Initial commit"))
    for step in steps:
        result = _git(context, *step, identity=identity)
        if result.returncode != 0:
            raise GitInitFailed(f"git {step[0]} failed: {result.stderr.decode(errors='replace').strip()[:500]}")
    forget_git_info(context.directory)
    fresh = context_for_directory(context.user, context.directory, workspace_id=context.workspace_id)
    project = project_of(fresh)
    events.publish_context("project.updated", project_wire(project), fresh)
    return project
