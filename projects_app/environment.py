"""What a client learns about where it works: GET /path and GET /vcs."""
from __future__ import annotations

import os
import subprocess

from django.conf import settings

from agentserver import paths
from agentserver.context import default_directory


def user_data_dir(user) -> str:
    """The user's own corner of the server's data directory (never the server's $HOME)."""
    return str(settings.DATA_DIR / "users" / str(user.pk))


def path_info(*, context) -> dict:
    base = user_data_dir(context.user)
    return {
        "home": default_directory(context.user),
        "state": os.path.join(base, "state"),
        "config": os.path.join(base, "config"),
        "worktree": context.worktree if context.vcs else "/",
        "directory": context.directory,
    }


def _git(cwd: str, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _default_branch(cwd: str) -> str | None:
    """origin's HEAD when there is a remote, else a local main or master, else unknown."""
    remote_head = _git(cwd, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if remote_head:
        return remote_head.split("/", 1)[1] if "/" in remote_head else remote_head
    for candidate in ("main", "master"):
        if _git(cwd, "rev-parse", "--verify", "--quiet", f"refs/heads/{candidate}") is not None:
            return candidate
    return None


def vcs_info(*, context) -> dict:
    if not context.vcs:
        return {"branch": None, "default_branch": None}
    cwd = paths.confine(context.directory, [context.boundary])
    branch = _git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch is None:
        branch = _git(cwd, "rev-parse", "--short", "HEAD")  # detached HEAD: the commit
    return {"branch": branch, "default_branch": _default_branch(cwd)}
