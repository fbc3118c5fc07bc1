"""Resolving the runtime context (agentserver.context.RuntimeContext) of a request: who is asking, in which
directory (query `directory` or header x-opencode-directory, URL-encoded), optionally which v2 workspace, and
what git worktree and project that makes. The HTTP edge calls `from_request` (registered at start-up by
ProjectsAppConfig.ready); the event streams and the agent's runs call `resolve` and `context_for_directory`."""
import os
import subprocess
import threading
import time
from urllib.parse import unquote

from agentserver import paths
from agentserver.context import RuntimeContext
from agentserver.errors import BadRequest, Forbidden, NotFound
from agentserver.sandbox import launcher as sandbox
from auth_app.tokens import roots_of
from projects_app import store

GLOBAL_PROJECT = "global"
_GIT_CACHE_SECONDS = 5.0
_git_cache: dict[str, tuple[float, tuple]] = {}
_git_lock = threading.Lock()


def _git(user, directory: str, *args: str) -> str | None:
    try:
        out = sandbox.run(user, ["git", *args], cwd=directory, timeout=10, env={"GIT_OPTIONAL_LOCKS": "0"},
                          offline=True)
    except (OSError, subprocess.SubprocessError, sandbox.SandboxUnavailable) as error:
        raise _GitNotRun from error
    return out.stdout.decode(errors="replace").strip() if out.returncode == 0 else None


class _GitNotRun(Exception):
    """git could not be started (no sandbox, a timeout): the directory is not known not to be a repository."""


def git_info(directory: str, *, user) -> tuple[str, str, str | None]:
    """(worktree, project id, vcs) for a real directory, found by git in `user`'s sandbox (the repository's
    config names programs); cached briefly since every request asks."""
    now = time.monotonic()
    with _git_lock:
        hit = _git_cache.get(directory)
        if hit and now - hit[0] < _GIT_CACHE_SECONDS:
            return hit[1]
    try:
        top = _git(user, directory, "rev-parse", "--show-toplevel")
        roots = _git(user, top, "rev-list", "--max-parents=0", "HEAD") if top else None
    except _GitNotRun:
        return (directory, GLOBAL_PROJECT, None)  # answered as a plain directory, but not remembered as one
    if top:
        project_id = sorted(roots.split())[0] if roots else GLOBAL_PROJECT
        info = (os.path.realpath(top), project_id, "git")
    else:
        info = (directory, GLOBAL_PROJECT, None)
    with _git_lock:
        _git_cache[directory] = (now, info)
    return info


def forget_git_info(directory: str) -> None:
    """Drop the cached lookups at and below `directory` (after `git init` made it a repository)."""
    with _git_lock:
        for key in [k for k in _git_cache if k == directory or k.startswith(directory.rstrip("/") + "/")]:
            del _git_cache[key]


def server_workspace_directories(user, workspace_id: str | None) -> list[str]:
    """Server-created worktrees may live outside the user's roots (under SHARED_DIR); a context in such a
    workspace admits them."""
    if not workspace_id:
        return []
    return store.server_workspace_directories(user=user, workspace_id=workspace_id)


def default_directory(user, *, roots: list[str] | None = None) -> str:
    """The user's first root (`roots`: the user's roots when the caller has just read them). A root inside the
    server's own directories (the checkout, the data dir: agentserver.paths.usable_base) is none."""
    roots = roots_of(user) if roots is None else roots
    if not roots:
        raise Forbidden("You have no allowed directories; ask an administrator to add one")
    for root in roots:
        if paths.usable_base(os.path.realpath(root)):
            return root
    raise Forbidden("Your allowed directories all lie inside the server's own directories (its code or data "
                    "directory), which no one may use; ask an administrator to give you another one")


def context_for_directory(user, directory: str, *, workspace_id: str | None = None,
                          roots: list[str] | None = None) -> RuntimeContext:
    bases = roots_of(user) if roots is None else list(roots)
    if workspace_id:
        # A worktree the server created may live under SHARED_DIR, outside the user's roots.
        bases = bases + server_workspace_directories(user, workspace_id)
    real = paths.confine(directory, bases)
    if not os.path.isdir(real):
        raise BadRequest(f"Directory does not exist: {directory}", kind="Query")
    worktree, project_id, vcs = git_info(real, user=user)
    return RuntimeContext(user=user, directory=real, worktree=worktree, project_id=project_id, vcs=vcs,
                          workspace_id=workspace_id)


def requested_directory(query: dict, headers: dict) -> str | None:
    """`directory` from the query wins over the x-opencode-directory header (which clients URL-encode)."""
    value = query.get("directory")
    if value:
        return value
    header = headers.get("x-opencode-directory") or headers.get("X-Opencode-Directory")
    return unquote(header) if header else None


def resolve(user, query: dict, headers: dict, *, allow_workspace: bool = False,
            roots: list[str] | None = None) -> RuntimeContext:
    """`roots`: the user's roots as read with this request's credentials (auth_app.tokens), if it has them."""
    workspace_id = query.get("workspace") if allow_workspace else None
    directory = requested_directory(query, headers)
    if workspace_id:
        workspace = store.workspace_by_id(user=user, workspace_id=workspace_id)
        if workspace is None:
            raise NotFound(f"Workspace not found: {workspace_id}")
        directory = directory or workspace.directory
    directory = directory or default_directory(user, roots=roots)
    return context_for_directory(user, directory, workspace_id=workspace_id, roots=roots)


def from_request(request, *, allow_workspace: bool = False, query: dict | None = None) -> RuntimeContext:
    """The request's context, resolved once per request (`query`: the directory/workspace parameters when
    the route takes them in another form). Resolved with the roots its token check read, if it has them."""
    cached = getattr(request, "_runtime_context", None)
    if cached is not None:
        return cached
    context = resolve(request.user, request.GET if query is None else query, request.headers,
                      allow_workspace=allow_workspace, roots=getattr(request.auth, "roots", None))
    request._runtime_context = context
    return context
