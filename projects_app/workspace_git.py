"""The git plumbing workspaces need: worktrees, branch and status facts, carrying uncommitted changes.

Every function takes real, already-confined directories; none of them decides what a user may touch."""
from __future__ import annotations

import os
import shutil
import subprocess

from agentserver.sandbox import launcher as sandbox

_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


class GitFailed(Exception):
    def __init__(self, args: tuple[str, ...], stderr: str):
        super().__init__(f"git {' '.join(args)} failed: {stderr.strip()[:500]}")
        self.stderr = stderr


def run(directory: str, *args: str, input: bytes | None = None, check: bool = True, timeout: float = 60) -> str:
    try:
        out = sandbox.run(sandbox.acting_user(), ["git", *args], cwd=directory, input=input, timeout=timeout,
                          env=_ENV, offline=True)
    except (OSError, subprocess.SubprocessError) as error:
        raise GitFailed(args, str(error)) from error
    except sandbox.SandboxUnavailable as error:
        raise GitFailed(args, error.message) from error
    if check and out.returncode != 0:
        raise GitFailed(args, out.stderr.decode(errors="replace"))
    return out.stdout.decode(errors="replace") if out.returncode == 0 else ""


def toplevel(directory: str) -> str | None:
    try:
        top = run(directory, "rev-parse", "--show-toplevel", check=True).strip()
    except GitFailed:
        return None
    return os.path.realpath(top) if top else None


def current_branch(directory: str) -> str | None:
    try:
        name = run(directory, "rev-parse", "--abbrev-ref", "HEAD").strip()
    except GitFailed:
        return None
    return None if not name or name == "HEAD" else name


def valid_branch_name(repo: str, name: str) -> bool:
    try:
        run(repo, "check-ref-format", "--branch", name)
    except GitFailed:
        return False
    return True


def branch_exists(repo: str, name: str) -> bool:
    return bool(run(repo, "branch", "--list", name, check=False).strip())


def worktree_add(repo: str, target: str, branch: str) -> None:
    os.makedirs(os.path.dirname(target), exist_ok=True)
    run(repo, "worktree", "add", "-q", "-b", branch, target, "HEAD")


def worktree_remove(repo: str, target: str) -> None:
    try:
        run(repo, "worktree", "remove", "--force", target)
    except GitFailed:
        # The repository may be gone or no longer know the worktree; the files are still ours to remove.
        shutil.rmtree(target, ignore_errors=True)
        if os.path.isdir(repo):
            run(repo, "worktree", "prune", check=False)


def worktree_prune(repo: str) -> None:
    run(repo, "worktree", "prune", check=False)


def worktree_paths(repo: str) -> list[str]:
    """Every worktree git knows for this repository, the main one first."""
    out = run(repo, "worktree", "list", "--porcelain", check=False)
    return [os.path.realpath(line[len("worktree "):]) for line in out.splitlines() if line.startswith("worktree ")]


def dirty_count(directory: str) -> int:
    out = run(directory, "status", "--porcelain", "--untracked-files=all")
    return sum(1 for line in out.splitlines() if line.strip())


def ahead_behind(directory: str, base: str) -> tuple[int, int] | None:
    """(ahead, behind) of HEAD against `base` (a ref or commit); None when it cannot be compared."""
    try:
        out = run(directory, "rev-list", "--left-right", "--count", f"{base}...HEAD").split()
    except GitFailed:
        return None
    if len(out) != 2:
        return None
    behind, ahead = int(out[0]), int(out[1])
    return ahead, behind


def upstream(directory: str) -> str | None:
    try:
        return run(directory, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}").strip() or None
    except GitFailed:
        return None


def head_commit(directory: str) -> str | None:
    try:
        return run(directory, "rev-parse", "HEAD").strip() or None
    except GitFailed:
        return None


def copy_uncommitted(source: str, target: str) -> dict:
    """Apply `git diff HEAD` of `source` onto `target` and copy its untracked files. Nothing is changed in
    `source`. Raises GitFailed (target untouched) when the diff does not apply."""
    patch = run(source, "diff", "HEAD", "--binary").encode()
    untracked = [p for p in run(source, "ls-files", "--others", "--exclude-standard", "-z").split("\0") if p]
    for rel in untracked:
        if os.path.lexists(os.path.join(target, rel)):
            raise GitFailed(("ls-files",), f"untracked file already exists in the target: {rel}")
    if patch.strip():
        run(target, "apply", "--check", "--binary", "-", input=patch)
        run(target, "apply", "--binary", "-", input=patch)
    copied = []
    for rel in untracked:
        src = os.path.join(source, rel)
        dst = os.path.join(target, rel)
        # Untracked symlinks are copied as links; never follow them out of the tree.
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isfile(src):
            shutil.copy2(src, dst)
        else:
            continue
        copied.append(rel)
    changed = run(source, "diff", "HEAD", "--name-only").split()
    return {"patched": changed, "copied": copied}
