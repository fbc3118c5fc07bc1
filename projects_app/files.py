"""fs.*: reading, listing and searching the files of a runtime context.

Every path a caller names is resolved by `agentserver.paths.confine` against the context boundary (the git
worktree, or the directory itself), relative paths against the context directory. Listings and searches
run ripgrep with its cwd inside the boundary and without following symlinks, so they never leave it. The
server's own directories inside a context (its data dir, code, virtualenv: agentserver.paths.server_dirs)
are masked: never listed, searched or read.

The path search in a person's home (their first root, when it is no git project) is opencode's: folders
only, two levels deep, hidden ones skipped (what the web app's "Open project" dialog searches)."""
from __future__ import annotations

import base64
import json
import mimetypes
import os
import subprocess
import threading
import time

from rapidfuzz import fuzz

from agentserver import paths, ripgrep
from agentserver.errors import ApiError, BadRequest, NotFound, PayloadTooLarge
from agentserver.sandbox import launcher as sandbox

MAX_READ_BYTES = 5 * 1024 * 1024
MAX_TREE_ENTRIES = 10_000
MAX_INDEXED_FILES = 200_000
SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX = 50, 200
GREP_LIMIT_DEFAULT, GREP_LIMIT_MAX = 100, 1000
_RG_TIMEOUT = 20
_BINARY_SNIFF = 8192


def rg_binary() -> str:
    found = ripgrep.binary()
    if not found:
        raise BadRequest("ripgrep (rg) is not installed on the server", kind="Server")
    return found


def confine(context, path: str) -> str:
    """The real path of `path` inside the context boundary; 403 outside, 400 for a malformed path."""
    return paths.confine(path, [context.boundary], relative_to=context.directory)


def relative(context, real: str) -> str:
    rel = os.path.relpath(real, context.directory)
    return "" if rel == "." else rel


# ---- fs.file ------------------------------------------------------------------------------------------

def _read_file(context, path: str, *, kind: str) -> tuple[str, bytes]:
    """(real path, bytes) of a regular file inside the context: 404 missing or not a file, 413 too big, 400
    unreadable (`kind`: where the path came from)."""
    real = confine(context, path)
    if not os.path.exists(real):
        raise NotFound(f"File not found: {path}")
    if not os.path.isfile(real):
        raise NotFound(f"Not a regular file: {path}")  # well-formed; no file there to read
    size = os.path.getsize(real)
    if size > MAX_READ_BYTES:
        raise PayloadTooLarge(f"File is too large to read ({size} bytes; the limit is {MAX_READ_BYTES})",
                              size=size, limit=MAX_READ_BYTES)
    try:
        with open(real, "rb") as handle:
            return real, handle.read(MAX_READ_BYTES + 1)
    except OSError as error:
        raise BadRequest(f"Cannot read {path}: {error.strerror}", kind=kind) from error


def _looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:_BINARY_SNIFF]


def file_read(*, context, path: str) -> dict:
    """FileContent: `{type: "text", content}` or `{type: "binary", content: base64, encoding, mimeType}`."""
    real, data = _read_file(context, path, kind="Query")
    if not _looks_binary(data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            from projects_app.environment import file_change

            return {"type": "text", "content": text, **file_change(context=context, real=real)}
    mime = mimetypes.guess_type(real)[0] or "application/octet-stream"
    return {"type": "binary", "content": base64.b64encode(data).decode("ascii"), "encoding": "base64",
            "mimeType": mime}


def file_bytes(*, context, path: str) -> tuple[bytes, str]:
    """v2 fs.read: the file's bytes as they are and its media type (404 missing or not a file, 413 too big)."""
    real, data = _read_file(context, path, kind="Params")
    mime = mimetypes.guess_type(real)[0] or ("application/octet-stream" if _looks_binary(data) else "text/plain")
    return data, mime


def entries_of(nodes: list[dict]) -> list[dict]:
    """v2's FileSystemEntry of a FileNode: `{path, type}`, a directory's path without its trailing "/"."""
    return [{"path": node["path"].rstrip("/"), "type": node["type"]} for node in nodes]


def found_entries(paths: list[str]) -> list[dict]:
    """v2's FileSystemEntry of path_search's results (directories end in "/")."""
    return [{"path": path.rstrip("/"), "type": "directory" if path.endswith("/") else "file"} for path in paths]


# ---- fs.tree ------------------------------------------------------------------------------------------

def _git_ignored(cwd: str, names: list[str]) -> set[str]:
    """Which of `names` (relative to cwd) git ignores; empty outside a repository."""
    if not names:
        return set()
    try:
        out = sandbox.run(sandbox.acting_user(), ["git", "check-ignore", "-z", "--stdin"], cwd=cwd,
                          input="\0".join(names).encode() + b"\0", timeout=10, env={"GIT_OPTIONAL_LOCKS": "0"},
                          offline=True)
    except (OSError, subprocess.SubprocessError, sandbox.SandboxUnavailable):
        return set()
    if out.returncode not in (0, 1):
        return set()
    return {name for name in out.stdout.decode(errors="replace").split("\0") if name}


def _masked_entry(entry: os.DirEntry, directory: str, owned: set[str]) -> bool:
    """A server directory in a listing of the real `directory` (one of `owned`: paths.masked_in), or a symlink
    there that leads into one."""
    absolute = os.path.join(directory, entry.name)
    if absolute in owned:
        return True
    try:
        link = entry.is_symlink()
    except OSError:
        link = False
    return link and paths.masked(os.path.realpath(absolute), directory)


@sandbox.on_behalf
def directory_list(*, context, path: str) -> list[dict]:
    """FileNode list of one directory: directories first, then files, each by name (case-insensitive)."""
    real = confine(context, path or ".")
    if not os.path.exists(real):
        raise NotFound(f"Directory not found: {path}")
    if not os.path.isdir(real):
        raise NotFound(f"Not a directory: {path}")
    try:
        with os.scandir(real) as iterator:
            entries = [entry for _, entry in zip(range(MAX_TREE_ENTRIES), iterator)]
    except OSError as error:
        raise BadRequest(f"Cannot list {path}: {error.strerror}", kind="Query") from error
    owned = set(paths.masked_in(real))
    entries = [entry for entry in entries if not _masked_entry(entry, real, owned)]
    ignored = _git_ignored(real, [e.name for e in entries]) if context.vcs else set()
    nodes = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        absolute = os.path.join(real, entry.name)
        rel = relative(context, absolute)
        nodes.append({"name": entry.name, "path": rel + "/" if is_dir else rel, "absolute": absolute,
                      "type": "directory" if is_dir else "file", "ignored": entry.name in ignored})
    nodes.sort(key=lambda n: (n["type"] != "directory", n["name"].lower(), n["name"]))
    return nodes


# ---- fs.search ----------------------------------------------------------------------------------------

def _rg(args: list[str], cwd: str) -> subprocess.Popen:
    binary = rg_binary()
    return sandbox.popen(sandbox.acting_user(), [binary, *args], cwd=cwd, expose=[binary],
                         offline=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _watchdog(process: subprocess.Popen) -> threading.Timer:
    """Kill ripgrep if it outlives its time, so a huge or slow tree cannot hold a request thread."""
    timer = threading.Timer(_RG_TIMEOUT, process.kill)
    timer.daemon = True
    timer.start()
    return timer


def _finish(process: subprocess.Popen) -> str:
    try:
        _, stderr = process.communicate(timeout=_RG_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return (stderr or b"").decode(errors="replace").strip()


_FILES_CACHE_SECONDS = 2.0
_files_cache: dict[str, tuple[float, list[str]]] = {}
_files_lock = threading.Lock()


def worktree_files(directory: str) -> list[str]:
    """Files under `directory` (relative, `/`-separated), honouring .gitignore, hidden files included.
    Cached for a moment: a file picker searches on every keystroke."""
    now = time.monotonic()
    with _files_lock:
        hit = _files_cache.get(directory)
        if hit and now - hit[0] < _FILES_CACHE_SECONDS:
            return hit[1]
    files = _list_files(directory)
    with _files_lock:
        for key in [k for k, (at, _) in _files_cache.items() if now - at >= _FILES_CACHE_SECONDS]:
            del _files_cache[key]
        _files_cache[directory] = (now, files)
    return files


def _list_files(directory: str) -> list[str]:
    masked = ripgrep.masked_prefixes(directory)
    process = _rg(["--files", "--hidden", "--glob", "!.git", *ripgrep.exclusions(directory), "--no-messages", "./"],
                  directory)
    timer = _watchdog(process)
    files = []
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.decode(errors="replace").rstrip("\n")
        if masked and ripgrep.is_masked(line, masked):
            continue
        files.append(line[2:] if line.startswith("./") else line)
        if len(files) >= MAX_INDEXED_FILES:
            process.kill()
            break
    _finish(process)
    timer.cancel()
    return files


def _directories_of(files: list[str]) -> list[str]:
    seen: set[str] = set()
    for file in files:
        parts = file.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            seen.add("/".join(parts[:depth]) + "/")
    return sorted(seen)


def _is_subsequence(needle: str, haystack: str) -> bool:
    position = 0
    for char in needle:
        position = haystack.find(char, position)
        if position < 0:
            return False
        position += 1
    return True


def _score(query: str, candidate: str) -> float:
    name = candidate.rstrip("/").rsplit("/", 1)[-1].lower()
    score = fuzz.partial_ratio(query, candidate.lower()) + fuzz.WRatio(query, name)
    if query in name:
        score += 50 + (25 if name.startswith(query) else 0)
    return score - len(candidate) / 100  # shorter paths win ties


# opencode's scan of the home directory (packages/opencode/src/file/index.ts, `isGlobalHome`): two levels of
# folders, none hidden, and below the top none of these.
HOME_NESTED_IGNORED = frozenset({"node_modules", "dist", "build", "target", "vendor"})


def _is_home(context) -> bool:
    """opencode's "global home": the context is the person's home (their first usable root, what path.get
    answers as `home`) and no git project."""
    if context.vcs:
        return False
    from projects_app.contexts import default_directory

    try:
        return os.path.realpath(default_directory(context.user)) == context.directory
    except ApiError:
        return False


def _folders(directory: str, *, skip: frozenset = frozenset()) -> list[str]:
    """The names of the folders in `directory` (not symlinks to one: opencode's Dirent.isDirectory()), hidden
    ones, `skip` and the server's own directories left out."""
    try:
        with os.scandir(directory) as iterator:
            entries = [entry for _, entry in zip(range(MAX_TREE_ENTRIES), iterator)]
    except OSError:
        return []
    owned = set(paths.masked_in(directory))
    found = []
    for entry in entries:
        try:
            folder = entry.is_dir(follow_symlinks=False)
        except OSError:
            folder = False
        if folder and not entry.name.startswith(".") and entry.name not in skip \
                and os.path.join(directory, entry.name) not in owned:
            found.append(entry.name)
    return found


def home_directories(directory: str) -> list[str]:
    """The home's folders and their folders (`name/`, `name/child/`), sorted."""
    found = []
    for name in _folders(directory):
        found.append(name + "/")
        found += [f"{name}/{child}/" for child in _folders(os.path.join(directory, name), skip=HOME_NESTED_IGNORED)]
    return sorted(found)


@sandbox.on_behalf
def path_search(*, context, query: str, type: str | None = None, limit: int = SEARCH_LIMIT_DEFAULT) -> list[str]:
    """Fuzzy path search: every query character must appear in order (case-insensitive), best match first.
    `type` None searches files and directories (directories end in "/"). In the person's home, folders only
    (no file is indexed there), as opencode."""
    candidates: list[str] = []
    if _is_home(context):
        if type in (None, "directory"):
            candidates = home_directories(context.directory)
    else:
        files = worktree_files(context.directory)
        if type in (None, "file"):
            candidates += files
        if type in (None, "directory"):
            candidates += _directories_of(files)
    needle = query.strip().lower()
    if not needle:
        return sorted(candidates, key=lambda c: (c.count("/"), c.lower()))[:limit]
    matches = [c for c in candidates if _is_subsequence(needle, c.lower())]
    matches.sort(key=lambda c: (-_score(needle, c), c))
    return matches[:limit]


# ---- fs.grep ------------------------------------------------------------------------------------------

def _text(field: dict | None) -> str:
    if not field:
        return ""
    if "text" in field:
        return field["text"]
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", errors="replace")


def _strip_dot(path: str) -> str:
    return path[2:] if path.startswith("./") else path


@sandbox.on_behalf
def content_grep(*, context, pattern: str, include: str | None = None, limit: int = GREP_LIMIT_DEFAULT) -> list[dict]:
    """ripgrep matches `{path: {text}, lines: {text}, line_number, absolute_offset, submatches}`."""
    args = ["--json", "--hidden", "--glob", "!.git", "--max-columns", "2000", "--max-filesize", "10M"]
    if include:
        args += ["--glob", include]
    masked = ripgrep.masked_prefixes(context.directory)
    args += [*ripgrep.exclusions(context.directory), "--regexp", pattern, "./"]  # after `include`: they win
    process = _rg(args, context.directory)
    timer = _watchdog(process)
    matches: list[dict] = []
    assert process.stdout is not None
    for raw in process.stdout:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if event.get("type") != "match":
            continue
        data = event["data"]
        path = _strip_dot(_text(data.get("path")))
        if masked and ripgrep.is_masked(path, masked):
            continue
        matches.append({
            "path": {"text": path},
            "lines": {"text": _text(data.get("lines"))},
            "line_number": data.get("line_number") or 0,
            "absolute_offset": data.get("absolute_offset") or 0,
            "submatches": [{"match": {"text": _text(s.get("match"))}, "start": s["start"], "end": s["end"]}
                           for s in data.get("submatches", [])],
        })
        if len(matches) >= limit:
            process.kill()
            break
    stderr = _finish(process)
    timer.cancel()
    if process.returncode == 2 and not matches and "regex" in stderr.lower():
        raise BadRequest(f"Invalid pattern: {stderr[:500]}", kind="Body")
    return matches
