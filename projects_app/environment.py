"""Where a client works and what changed there: path.get, vcs.get, vcs.status / vcs.diff / vcs.patch."""
from __future__ import annotations

import codecs
import os
import secrets
import subprocess

from django.conf import settings

from agentserver import paths
from agentserver.coalesce import Coalescer
from agentserver.errors import BadRequest, Conflict, Forbidden, PayloadTooLarge
from agentserver.events import publisher as events
from agentserver.sandbox import launcher as sandbox
from projects_app.contexts import default_directory


def user_data_dir(user) -> str:
    """The user's own corner of the server's shared directory (never the server's $HOME)."""
    return str(settings.SHARED_DIR / "users" / str(user.pk))


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
        out = sandbox.run(sandbox.acting_user(), ["git", *args], cwd=cwd, timeout=10, offline=True,
                          env={"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError, sandbox.SandboxUnavailable):
        return None
    return out.stdout.decode(errors="replace").strip() if out.returncode == 0 else None


def _default_branch(cwd: str) -> str | None:
    """origin's HEAD when there is a remote, else a local main or master, else unknown."""
    remote_head = _git(cwd, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if remote_head:
        return remote_head.split("/", 1)[1] if "/" in remote_head else remote_head
    for candidate in ("main", "master"):
        if _git(cwd, "rev-parse", "--verify", "--quiet", f"refs/heads/{candidate}") is not None:
            return candidate
    return None


@sandbox.on_behalf
def vcs_info(*, context) -> dict:
    """opencode's VcsInfo: `branch` and `default_branch` when there are such, absent otherwise (never null)."""
    if not context.vcs:
        return {}
    cwd = paths.confine(context.directory, [context.boundary])
    branch = _git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch is None:
        branch = _git(cwd, "rev-parse", "--short", "HEAD")  # detached HEAD: the commit
    known = {"branch": branch, "default_branch": _default_branch(cwd)}
    return {key: value for key, value in known.items() if value is not None}


# ---- vcs.status / vcs.diff / vcs.patch (FILES helper) -------------------------------------------------

_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_PATCH_BYTES = 10 * 1024 * 1024
_DIFF_FLAGS = ("--no-color", "--no-ext-diff", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/")


def _git_raw(cwd: str, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess | None:
    return _git_raw_argv(cwd, ["git", "-c", "core.quotePath=false", *args], input=input)


def _git_raw_argv(cwd: str, argv: list[str], input: bytes | None = None) -> subprocess.CompletedProcess | None:
    try:
        return sandbox.run(sandbox.acting_user(), argv, cwd=cwd, input=input, timeout=60, offline=True,
                           env={"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError, sandbox.SandboxUnavailable):
        return None


def _head_or_empty(cwd: str) -> str:
    return "HEAD" if _git(cwd, "rev-parse", "--verify", "--quiet", "HEAD") is not None else _EMPTY_TREE


def _untracked(cwd: str) -> list[str]:
    out = _git_raw(cwd, "ls-files", "--others", "--exclude-standard", "-z")
    if out is None or out.returncode != 0:
        return []
    return [p for p in out.stdout.decode(errors="replace").split("\0") if p]


def _line_count(path: str) -> int:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PATCH_BYTES)
    except OSError:
        return 0
    if b"\0" in data[:8192]:
        return 0
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def _git_batch(cwd: str, script: str) -> list[subprocess.CompletedProcess] | None:
    """Several git commands in one sandbox: a launch costs milliseconds (namespaces, mounts), a git command
    far less. `script` ends each command with REPORT; returns one result per REPORT, in order."""
    marker = f"\n@@agentserver-{secrets.token_hex(8)}@@"
    report = f"printf '{marker}%d{marker}' $?"
    out = _git_raw_argv(cwd, ["sh", "-c", script.replace("REPORT", report)])
    if out is None or out.returncode != 0:
        return None
    pieces = out.stdout.split(marker.encode())
    results = []
    for index in range(0, len(pieces) - 1, 2):
        code = pieces[index + 1].decode()
        results.append(subprocess.CompletedProcess([], int(code) if code.isdigit() else 1, pieces[index], b""))
    return results


_STATUS_SCRIPT = f"""
if git rev-parse --verify --quiet HEAD >/dev/null 2>&1; then base=HEAD; else base={_EMPTY_TREE}; fi
git -c core.quotePath=false diff --no-renames --name-status -z "$base"; REPORT
git -c core.quotePath=false diff --no-renames --numstat -z "$base"; REPORT
git -c core.quotePath=false ls-files --others --exclude-standard -z; REPORT
"""


_status_runs = Coalescer()


@sandbox.on_behalf
def vcs_status(*, context) -> list[dict]:
    """Changed files of the worktree against HEAD: `{path, status, additions, deletions}`, paths relative
    to the worktree; status added | modified | deleted | untracked. Clients poll this: calls for the same
    user and worktree at once share a git run that started after they asked (agentserver.coalesce)."""
    if not context.vcs:
        return []
    changes = _status_runs.call((context.user.pk, context.worktree), lambda: _worktree_status(context.worktree))
    return [dict(change) for change in changes]


def _worktree_status(top: str) -> list[dict]:
    results = _git_batch(top, _STATUS_SCRIPT)
    if results is None or len(results) != 3:
        return []
    status, numstat, untracked = results
    changes: dict[str, dict] = {}
    if status.returncode == 0:
        tokens = status.stdout.decode(errors="replace").split("\0")
        for code, path in zip(tokens[0::2], tokens[1::2]):
            kind = {"A": "added", "D": "deleted"}.get(code[:1], "modified")
            changes[path] = {"path": path, "status": kind, "additions": 0, "deletions": 0}
    if numstat.returncode == 0:
        for record in numstat.stdout.decode(errors="replace").split("\0"):
            parts = record.split("\t", 2)
            if len(parts) == 3 and parts[2] in changes:
                changes[parts[2]]["additions"] = int(parts[0]) if parts[0].isdigit() else 0
                changes[parts[2]]["deletions"] = int(parts[1]) if parts[1].isdigit() else 0
    if untracked.returncode == 0:
        for path in (p for p in untracked.stdout.decode(errors="replace").split("\0") if p):
            changes[path] = {"path": path, "status": "untracked",
                             "additions": _line_count(os.path.join(top, path)), "deletions": 0}
    return sorted(changes.values(), key=lambda c: c["path"])


def _diff_base(top: str, mode: str) -> str:
    """worktree: HEAD; default: the merge-base of HEAD and the default branch (HEAD when there is none)."""
    head = _head_or_empty(top)
    if mode == "default" and head == "HEAD":
        default = _default_branch(top)
        if default:
            ref = default if _git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{default}") \
                else f"origin/{default}"
            base = _git(top, "merge-base", "HEAD", ref)
            if base:
                return base
    return head


def _split_patch(text: str) -> list[str]:
    chunks, current = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") and current:
            chunks.append("".join(current))
            current = []
        current.append(line)
    if current:
        chunks.append("".join(current))
    return chunks


def _file_diff(chunk: str) -> dict:
    lines = chunk.splitlines()
    old = new = None
    additions = deletions = 0
    in_hunk = False
    for line in lines:
        if line.startswith("@@"):
            in_hunk = True
        elif not in_hunk and line.startswith("--- "):
            old = line[4:].rstrip("\t")
        elif not in_hunk and line.startswith("+++ "):
            new = line[4:].rstrip("\t")
        elif in_hunk and line.startswith("+"):
            additions += 1
        elif in_hunk and line.startswith("-"):
            deletions += 1
    if old is None and new is None and lines:  # binary or mode-only change: take the header's b/ path
        header = lines[0][len("diff --git "):]
        new = header.split(" b/", 1)[1] if " b/" in header else header
        new = "b/" + new
    status = "added" if old == "/dev/null" else "deleted" if new == "/dev/null" else "modified"
    name = (old if status == "deleted" else new) or ""
    return {"file": name[2:] if name[:2] in ("a/", "b/") else name, "patch": chunk,
            "additions": additions, "deletions": deletions, "status": status}


@sandbox.on_behalf
def vcs_diff_patch(*, context, mode: str = "worktree") -> str:
    """The unified diff of the worktree (tracked changes and untracked files) against the mode's base."""
    if not context.vcs:
        return ""
    top = context.worktree
    out = _git_raw(top, "diff", *_DIFF_FLAGS, _diff_base(top, mode))
    text = out.stdout.decode(errors="replace") if out is not None and out.returncode == 0 else ""
    for path in _untracked(top):
        extra = _git_raw(top, "diff", *_DIFF_FLAGS, "--no-index", "--", "/dev/null", path)
        if extra is not None and extra.returncode in (0, 1):
            text += extra.stdout.decode(errors="replace")
    return text


@sandbox.on_behalf
def vcs_diff(*, context, mode: str = "worktree") -> list[dict]:
    """FileDiff list `{file, patch, additions, deletions, status}` (1.18's VcsFileDiff)."""
    return [_file_diff(chunk) for chunk in _split_patch(vcs_diff_patch(context=context, mode=mode))]


def _unquote(name: str) -> str:
    """git C-quotes unusual names ("a/\\303\\251.txt"); decode them so the checks see the real path."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return codecs.escape_decode(name[1:-1].encode())[0].decode("utf-8", errors="replace")
    return name


def _strip_prefix(name: str) -> str:
    return name[2:] if name[:2] in ("a/", "b/") else name


def _patch_paths(patch: str) -> list[str]:
    found = []
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            name = _unquote(line[4:].split("\t", 1)[0].strip())
            if name != "/dev/null":
                found.append(_strip_prefix(name))
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            found.append(_unquote(line.split(" ", 2)[2].strip()))
        elif line.startswith("diff --git a/") and " b/" in line:  # binary and mode-only patches name files here
            old_name, new_name = line[len("diff --git a/"):].split(" b/", 1)
            found += [old_name, new_name]
    return found


@sandbox.on_behalf
def vcs_patch(*, context, patch: str) -> dict:
    """Apply a unified diff in the context directory with `git apply`, after `--check`. Every path it
    names must stay inside the context boundary; git's own message comes back on a bad patch."""
    if len(patch.encode()) > MAX_PATCH_BYTES:
        raise PayloadTooLarge(f"Patch is larger than {MAX_PATCH_BYTES} bytes")
    cwd = context.directory
    names = _patch_paths(patch)
    if not names:
        raise BadRequest("The patch names no files", kind="Body")
    for name in names:
        if not name or "\x00" in name:  # `diff --git a/ b/x`, or a quoted name's \000: no file has that name
            raise Conflict(f"The patch names a path no file can have: {name!r}")
        if os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
            raise Forbidden(f"Patch path is outside the working directory: {name}", path=name)
        paths.confine(name, [context.boundary], relative_to=cwd)
    data = patch.encode() if patch.endswith("\n") else (patch + "\n").encode()
    # Inside a repository git reads patch paths from the worktree top and silently skips those outside
    # the cwd; run at the top with --directory so paths are relative to the runtime directory, as promised.
    flags = ["--whitespace=nowarn"]
    if context.vcs and context.path:
        cwd, flags = context.worktree, flags + [f"--directory={context.path}"]
    check = _git_raw(cwd, "apply", "--check", *flags, "-", input=data)
    if check is None:
        raise BadRequest("git is not available", kind="Body")
    if check.returncode != 0:
        # Well-formed, but not for the tree as it is now: a conflict with its state, not bad input.
        raise Conflict(check.stderr.decode(errors="replace").strip() or "The patch does not apply")
    applied = _git_raw(cwd, "apply", *flags, "-", input=data)
    if applied is None or applied.returncode != 0:
        message = applied.stderr.decode(errors="replace").strip() if applied is not None else "git failed"
        raise Conflict(message or "The patch does not apply")
    files = sorted(set(names))
    for name in files:
        events.publish_context("file.edited", {"file": os.path.join(context.directory, name)}, context)
    return {"applied": True, "files": files}


def _hunks(diff: str) -> list[dict]:
    hunks: list[dict] = []
    for line in diff.splitlines():
        if line.startswith("@@"):
            header = line.split("@@")[1].strip().split(" ")
            old, new = header[0][1:].split(","), header[1][1:].split(",")
            hunks.append({"oldStart": int(old[0]), "oldLines": int(old[1]) if len(old) > 1 else 1,
                          "newStart": int(new[0]), "newLines": int(new[1]) if len(new) > 1 else 1, "lines": []})
        elif hunks and line[:1] in (" ", "+", "-", "\\"):
            hunks[-1]["lines"].append(line)
    return hunks


@sandbox.on_behalf
def file_change(*, context, real: str) -> dict:
    """`{diff, patch}` of one tracked file against HEAD for FileContent; `{}` when unchanged or untracked."""
    if not context.vcs:
        return {}
    rel = os.path.relpath(real, context.worktree)
    out = _git_raw(context.worktree, "diff", *_DIFF_FLAGS, "HEAD", "--", rel)
    if out is None or out.returncode != 0 or not out.stdout:
        return {}
    diff = out.stdout.decode(errors="replace")
    try:
        hunks = _hunks(diff)
    except (IndexError, ValueError):
        return {"diff": diff}
    return {"diff": diff, "patch": {"oldFileName": rel, "newFileName": rel, "hunks": hunks}}
