"""Snapshots of a project's files (reference §5.7, opencode `snapshot/index.ts`).

A private git repository per (owner, project, worktree) lives under SHARED_DIR/snapshot/<owner>/<project>/
<hash of worktree>; git runs with `--git-dir` there and `--work-tree` = the project's tree, so the user's own
`.git` is never written. A snapshot is a tree object (`write-tree` of everything `git add .` picks up,
honouring the tree's ignore files and the repo's info/exclude; files over 2 MiB are left out).

Everything here is synchronous (subprocess); async callers go through `run(...)` (a worker thread).
Work on one snapshot repository is serialized by a thread lock plus an flock (several server workers)."""
from __future__ import annotations

import difflib
import fcntl
import hashlib
import logging
import os
import re
import subprocess
import threading
import time
from contextlib import contextmanager

from django.conf import settings

from agentserver import paths
from agentserver.sandbox import launcher as sandbox
from agentserver.workers.loop import free_db

log = logging.getLogger(__name__)
SIZE_LIMIT = 2 * 1024 * 1024
GIT_TIMEOUT = 120
GC_EVERY_SECONDS = 24 * 3600
PRUNE = "7.days.ago"
_CORE = ["-c", "core.longpaths=true", "-c", "core.symlinks=true", "-c", "core.autocrlf=false",
         "-c", "core.quotepath=false", "-c", "core.fsmonitor=false"]
_SAFE_COMPONENT = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_TREE_HASH = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_locks: dict[str, threading.Lock] = {}
_exclude_paths: dict[tuple, str] = {}  # (owner id, tree) → the user's info/exclude
_locks_guard = threading.Lock()
# gitdir → (the snapshot index as last seen, the tree written from it, when): a step's git runs are half of
# a tool-calling prompt's children, and most tracks find nothing to add, so the index, and its tree, are as
# the last track left them. Trusted for an hour: a gc (in any worker) prunes only trees a week old.
_trees: dict[str, tuple[tuple, str, float]] = {}
TREE_TRUSTED_SECONDS = 3600


def run(fn, *args, **kwargs):
    """Await a blocking snapshot call from the event loop (in a worker thread)."""
    return free_db(fn)(*args, **kwargs)


def _git_env() -> dict:
    # Added to the sandbox's safe environment: file names are literal paths, never globs; no prompts. The
    # system config is the sandbox's own /etc/gitconfig (it trusts the user's roots, owned by other uids).
    return {"GIT_LITERAL_PATHSPECS": "1", "GIT_TERMINAL_PROMPT": "0"}


def _context_bases(context) -> list[str]:
    from auth_app.tokens import roots_of
    from projects_app.contexts import server_workspace_directories

    return roots_of(context.user) + server_workspace_directories(context.user, context.workspace_id)


def for_context(context, config: dict | None = None) -> "Snapshots | None":
    """The snapshot repository of a runtime context; None when snapshots are off (not git, `snapshot: false`)."""
    if context is None or context.vcs != "git" or (config or {}).get("snapshot") is False:
        return None
    project_id = str(context.project_id)
    if not _SAFE_COMPONENT.match(project_id):
        return None
    bases = _context_bases(context)
    # The worktree may lie above the user's roots (a root inside a bigger repository): then only the
    # confined directory is snapshotted, so revert can never touch files outside the roots.
    tree = context.worktree if paths.within_any(context.worktree, bases) else context.directory
    try:
        tree = paths.confine(tree, bases)
    except Exception:  # noqa: BLE001 — a context outside the roots has no snapshots
        return None
    return Snapshots(owner_id=context.user.pk, project_id=project_id, worktree=tree, owner=context.user,
                     roots=bases)


class Snapshots:
    def __init__(self, *, owner_id, project_id: str, worktree: str, owner=None, roots: list[str] | None = None):
        # git runs in the owner's sandbox: the tree is theirs, and their repository's attributes (filters) and
        # hooks are programs they chose. The snapshot store is in their own corner of the data dir.
        self.owner, self.roots = owner, roots
        self.worktree = worktree
        base = os.path.join(str(settings.SHARED_DIR), "snapshot")
        digest = hashlib.sha1(worktree.encode()).hexdigest()
        owner, project = str(owner_id), str(project_id)
        if not (_SAFE_COMPONENT.match(owner) and _SAFE_COMPONENT.match(project)) or "." in (owner[0], project[0]):
            raise ValueError(f"unsafe snapshot location {owner!r}/{project!r}")
        self.gitdir = paths.confine(os.path.join(base, owner, project, digest), [base])

    # ---- plumbing ---------------------------------------------------------------------------------
    def _git(self, *args: str, cwd: str | None = None, tree: bool = True) -> subprocess.CompletedProcess:
        prefix = ["--git-dir", self.gitdir] + (["--work-tree", self.worktree] if tree else [])
        try:
            return sandbox.run(self.owner, ["git", *_CORE, *prefix, *args], cwd=cwd or self.worktree,
                               env=_git_env(), timeout=GIT_TIMEOUT, roots=self.roots, offline=True)
        except (OSError, subprocess.SubprocessError) as error:
            return subprocess.CompletedProcess(args, 1, b"", str(error).encode())
        except sandbox.SandboxUnavailable as error:
            return subprocess.CompletedProcess(args, 1, b"", error.message.encode())

    @contextmanager
    def _locked(self):
        with _locks_guard:
            lock = _locks.setdefault(self.gitdir, threading.Lock())
        with lock:
            os.makedirs(self.gitdir, exist_ok=True)
            with open(os.path.join(self.gitdir, "agentserver.lock"), "a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)

    def _init(self) -> None:
        if os.path.exists(os.path.join(self.gitdir, "HEAD")):
            return
        self._git("init", "-q")
        for key, value in (("core.autocrlf", "false"), ("core.longpaths", "true"),
                           ("core.symlinks", "true"), ("core.fsmonitor", "false"), ("gc.auto", "0")):
            self._git("config", key, value, tree=False)

    def _maybe_gc(self) -> None:
        """Unreferenced snapshot objects older than a week are pruned, at most once a day (as opencode's hourly
        `gc --prune=7.days`, without a timer of its own)."""
        marker = os.path.join(self.gitdir, "agentserver.gc")
        try:
            due = time.time() - os.path.getmtime(marker) >= GC_EVERY_SECONDS
        except OSError:
            due = False  # a new repository: the first gc a day from now
        with open(marker, "a"):
            os.utime(marker)
        if not due:
            return
        if self._git("gc", "--quiet", f"--prune={PRUNE}", tree=False).returncode:
            log.warning("snapshot: gc failed in %s", self.gitdir)

    def _user_excludes(self) -> str:
        """The user's repo's info/exclude (read only), so what they exclude is not snapshotted either."""
        path = self._user_exclude_path()
        try:
            if path and os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as handle:
                    return handle.read().rstrip()
        except OSError:
            pass
        return ""

    def _user_exclude_path(self) -> str:
        """Where the user's repo keeps info/exclude: asked of git once per tree and kept (every track needed
        it, one more sandboxed git per snapshot) until the file is gone from there."""
        key = (getattr(self.owner, "pk", None), self.worktree)
        known = _exclude_paths.get(key)
        if known is not None and os.path.isfile(known):
            return known
        try:
            out = sandbox.run(self.owner, ["git", "rev-parse", "--path-format=absolute", "--git-path",
                                           "info/exclude"], cwd=self.worktree, env=_git_env(), timeout=10,
                              roots=self.roots, offline=True)
        except (OSError, subprocess.SubprocessError, sandbox.SandboxUnavailable):
            return ""
        path = out.stdout.decode(errors="replace").strip() if out.returncode == 0 else ""
        if path:
            _exclude_paths[key] = path
        return path

    def _write_excludes(self, large: list[str]) -> None:
        # The server's own directories inside the tree (a data dir in a repository: there the user's own
        # corners of it, this very store among them, are mounted in the sandbox) are never snapshotted.
        owned = [os.path.relpath(d, self.worktree) for d in paths.masked_in(self.worktree)]
        lines = ([self._user_excludes()] + ["/" + _escape_exclude(item) for item in large]
                 + ["/" + _escape_exclude(item) + "/" for item in owned])
        text = "\n".join(line for line in lines if line)
        os.makedirs(os.path.join(self.gitdir, "info"), exist_ok=True)
        with open(os.path.join(self.gitdir, "info", "exclude"), "w", encoding="utf-8") as handle:
            handle.write(text + "\n" if text else "")

    def _add(self) -> None:
        """Stage the tree's current state into the snapshot index (large files excluded)."""
        self._write_excludes([])
        # One git for both lists: tracked files changed or deleted since the last snapshot (-m) and new files
        # not excluded (-o); a track runs it every step.
        listed = self._git("ls-files", "--modified", "--others", "--exclude-standard", "-z", "--", ".")
        if listed.returncode:
            log.warning("snapshot: cannot list files of %s: %s", self.worktree, listed.stderr[:300])
            return
        names = {n for n in listed.stdout.decode(errors="surrogateescape").split("\0") if n}
        if not names:
            return
        large = [n for n in sorted(names) if _size(os.path.join(self.worktree, n)) > SIZE_LIMIT]
        if large:
            self._write_excludes(large)
        result = self._git("add", "--all", ".")
        if result.returncode:
            log.warning("snapshot: git add failed in %s: %s", self.worktree, result.stderr[:300])

    def _abs(self, rel: str) -> str:
        return os.path.join(self.worktree, rel)

    def _inside(self, file: str) -> str | None:
        try:
            return paths.confine(file, [self.worktree], relative_to=self.worktree)
        except Exception:  # noqa: BLE001 — a stored path outside the tree is ignored, never touched
            return None

    # ---- operations -------------------------------------------------------------------------------
    def track(self) -> str | None:
        """The tree hash of the current state (None when git fails)."""
        with self._locked():
            self._init()
            self._maybe_gc()
            self._add()
            index = self._index_state()
            known = _trees.get(self.gitdir)
            if (index is not None and known is not None and known[0] == index
                    and time.monotonic() - known[2] < TREE_TRUSTED_SECONDS):
                return known[1]
            result = self._git("write-tree")
            tree = result.stdout.decode().strip()
            if result.returncode or not tree:
                return None
            index = self._index_state()  # write-tree stores its cache in the index, a rewrite of its own
            if index is not None:
                _trees[self.gitdir] = (index, tree, time.monotonic())
            return tree

    def _index_state(self) -> tuple | None:
        """Which index file is there, and how it was last written: git replaces the file (a new inode) or
        rewrites it whenever it changes (an add, a read-tree, another worker's track)."""
        try:
            stat = os.stat(os.path.join(self.gitdir, "index"))
        except OSError:
            return None
        return stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns

    def patch(self, tree: str, to: str | None = None) -> dict:
        """{hash, files}: absolute paths of the files that differ from snapshot `tree` now (or in snapshot `to`)."""
        if to is not None and to == tree:
            return {"hash": tree, "files": []}
        with self._locked():
            if to is None:
                self._add()
            target = ["--cached", tree] if to is None else [tree, to]
            result = self._git("diff", "--no-ext-diff", "--no-renames", "--name-only", "-z", *target, "--", ".")
            if result.returncode:
                return {"hash": tree, "files": []}
            names = [n for n in result.stdout.decode(errors="replace").split("\0") if n]
            return {"hash": tree, "files": [self._abs(n) for n in names]}

    def readable(self, trees: list[str]) -> bool:
        """Whether the store holds every one of these snapshot trees (False when it cannot be read at all)."""
        if not trees:
            return True
        if not all(isinstance(tree, str) and _TREE_HASH.fullmatch(tree) for tree in trees):
            return False  # a stored value that is no hash (a client may write parts) never reaches git's options
        with self._locked():
            return self._git("rev-parse", *(f"{tree}^{{tree}}" for tree in trees), "--", tree=False).returncode == 0

    def restore(self, tree: str) -> bool:
        """Put every file of snapshot `tree` back (files created since are left alone, as opencode)."""
        with self._locked():
            if self._git("read-tree", tree).returncode:
                return False
            return self._git("checkout-index", "-a", "-f").returncode == 0

    def revert(self, patches: list[dict]) -> list[str]:
        """Each file back to its content in the earliest patch naming it; deleted if it did not exist there.
        The files it could not put back."""
        seen: set[str] = set()
        failed: list[str] = []
        with self._locked():
            for patch in patches:
                tree = patch.get("hash")
                if not isinstance(tree, str) or not tree:
                    continue
                for file in patch.get("files") or []:
                    real = self._inside(file) if isinstance(file, str) else None
                    if real is None or real in seen or real == self.worktree:
                        continue
                    seen.add(real)
                    if not self._revert_file(tree, real):
                        failed.append(real)
        return failed

    def _revert_file(self, tree: str, file: str) -> bool:
        rel = os.path.relpath(file, self.worktree)
        listed = self._git("ls-tree", "--name-only", tree, "--", rel)
        if listed.returncode:
            log.warning("snapshot: cannot read %s in %s: %s", rel, tree, listed.stderr[:300])
            return False
        if listed.stdout.strip():
            if self._git("checkout", tree, "--", rel).returncode:
                log.warning("snapshot: could not restore %s from %s", rel, tree)
                return False
            return True
        if os.path.isfile(file) or os.path.islink(file):
            os.unlink(file)
        return True

    def diff(self, tree: str) -> str:
        """Unified diff from snapshot `tree` to the current state."""
        with self._locked():
            self._add()
            result = self._git("diff", "--cached", "--no-ext-diff", "--no-renames", tree, "--", ".")
            return result.stdout.decode(errors="replace").strip() if result.returncode == 0 else ""

    def diff_full(self, before: str, after: str) -> list[dict]:
        """FileDiff per changed file between two snapshots: worktree-relative `file`, `before`/`after` contents,
        `additions`/`deletions`, `status`, and (1.18) the file's unified `patch`."""
        if not before or not after or before == after:
            return []
        with self._locked():
            statuses: dict[str, str] = {}
            result = self._git("diff", "--no-ext-diff", "--no-renames", "--name-status", "-z", before, after, "--", ".")
            fields = result.stdout.decode(errors="replace").split("\0")
            for code, name in zip(fields[0::2], fields[1::2]):
                if name:
                    statuses[name] = "added" if code.startswith("A") else "deleted" if code.startswith("D") else "modified"
            numstat = self._git("diff", "--no-ext-diff", "--no-renames", "--numstat", "-z", before, after, "--", ".")
            out = []
            for line in numstat.stdout.decode(errors="replace").split("\0"):
                adds, _, rest = line.partition("\t")
                dels, _, name = rest.partition("\t")
                if not name:
                    continue
                binary = adds == "-" and dels == "-"
                old = "" if binary else self._show(before, name)
                new = "" if binary else self._show(after, name)
                out.append({"file": name, "before": old, "after": new,
                            "additions": 0 if binary else _int(adds), "deletions": 0 if binary else _int(dels),
                            "status": statuses.get(name, "modified"), "patch": file_patch(name, old, new)})
            return out

    def _show(self, tree: str, name: str) -> str:
        result = self._git("show", f"{tree}:{name}", tree=False)
        return result.stdout.decode(errors="replace") if result.returncode == 0 else ""


def file_patch(name: str, before: str, after: str) -> str:
    """One file's unified diff in the shape opencode 1.18 stores (jsdiff's createTwoFilesPatch)."""
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), n=3)
    body = []
    for index, line in enumerate(lines):
        if index < 2:
            continue  # difflib's own ---/+++ header
        if line.startswith("@@"):
            line = re.sub(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@",
                          lambda m: f"@@ -{m[1]},{m[2] or 1} +{m[3]},{m[4] or 1} @@", line)
        body.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return (f"Index: {name}\n{'=' * 67}\n--- {name}\t\n+++ {name}\t\n" + "".join(body))


def _escape_exclude(name: str) -> str:
    return re.sub(r"([\\*?\[\]!#])", r"\\\1", name)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size if os.path.isfile(path) else 0
    except OSError:
        return 0


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0
