"""The one confinement function. Every file access of the server (routes, tools, PTY cwd, workspaces)
resolves its path here: symlinks resolved, then checked to lie inside one of the allowed bases.

The server's own directories (`server_dirs`: the data dir, the shared dir, the code, the virtualenv, the tools
and the web app's copy) are never a user's, whatever their roots say: a path inside one is admitted only
through a base that lies inside it too, and the only such bases are the server's deliberate corners of the
shared dir (`server_corners`: server-made worktrees and snapshot stores). A root that contains a server
directory has it masked; a root inside one is no base at all. The sandbox hides the same list
(agentserver.sandbox.launcher), so what a user's processes see and what the server's routes answer agree."""
import importlib.util
import os
import sys

from agentserver.errors import BadRequest, Forbidden

# The project's own packages: their directories are the server's code, wherever they are installed.
PACKAGES = ("agentserver", "auth_app", "projects_app", "providers_app", "pty_app", "sessions_app", "tui_app",
            "web_app", "server")
# The server's deliberate corners of the shared dir, per user below each: what a user's base may lie in.
CORNERS = ("worktrees", "snapshot")


class OutsideRoots(Forbidden):
    def __init__(self, path: str):
        super().__init__(f"Path is outside the allowed directories: {path}", path=path)
        self.path = path


def is_within(path: str, base: str) -> bool:
    """True when `path` is `base` or below it. Both must already be real paths.
    Compares whole components, so base /w/a does not admit /w/ab."""
    if base == os.sep:
        return path.startswith(os.sep)
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


# ---- the server's own directories ----------------------------------------------------------------------

_owned: dict[tuple, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _settings_key() -> tuple:
    from django.conf import settings

    return (str(settings.DATA_DIR), str(settings.SHARED_DIR), str(settings.BASE_DIR), sys.prefix,
            str(getattr(settings, "AGENTSERVER_TOOLS_DIR", "") or ""))


def _package_dirs() -> list[str]:
    found = []
    for name in PACKAGES:
        module = sys.modules.get(name)
        locations = list(getattr(module, "__path__", None) or [])
        if not locations:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            locations = list(spec.submodule_search_locations or []) if spec else []
        found += locations
    return found


def _compute(key: tuple) -> tuple[tuple[str, ...], tuple[str, ...]]:
    data, shared, base, prefix, tools = key
    candidates = [data, shared, base, *_package_dirs(), os.path.join(base, ".tools"), tools,
                  os.path.join(base, ".web-app")]
    if prefix != sys.base_prefix:  # a virtualenv; a system interpreter's prefix (/usr) is no server directory
        candidates.append(prefix)
    owned: list[str] = []
    for candidate in candidates:
        if not candidate:
            continue
        real = os.path.realpath(candidate)
        if real != os.sep and real not in owned:
            owned.append(real)
    corners = tuple(os.path.realpath(os.path.join(shared, name)) for name in CORNERS)
    return tuple(sorted(owned)), corners


def _owned_and_corners() -> tuple[tuple[str, ...], tuple[str, ...]]:
    key = _settings_key()
    found = _owned.get(key)
    if found is None:
        found = _owned[key] = _compute(key)
    return found


def server_dirs() -> tuple[str, ...]:
    """The server's own directories, as real paths (parents before children): the data dir, the shared dir
    (AGENTSERVER_SHARED_DIR), the code (the checkout, BASE_DIR, and the project's packages wherever they are),
    the virtualenv (sys.prefix), the tools dir (.tools) and the web app's copy (.web-app). The sandbox hides
    them and confinement refuses paths in them."""
    return _owned_and_corners()[0]


def server_corners() -> tuple[str, ...]:
    """The shared dir's per-user corners the server makes on purpose (worktrees, snapshot stores): a base
    inside one of them admits paths inside the server's directories that hold it."""
    return _owned_and_corners()[1]


def server_dir_of(path: str) -> str | None:
    """The outermost server directory that `path` (resolved) lies in (or is), None when it lies in none."""
    real = os.path.realpath(path)
    for owned in server_dirs():
        if is_within(real, owned):
            return owned
    return None


def usable_base(base: str) -> bool:
    """A base (`base` a real path) may admit paths: it lies in no server directory, or in one of the server's
    deliberate corners. A user's root inside the checkout or the data dir is no base."""
    owned, corners = _owned_and_corners()
    return not any(is_within(base, d) for d in owned) or any(is_within(base, c) for c in corners)


def masked_in(directory: str) -> list[str]:
    """The server directories strictly inside `directory` (a real path) that a listing or search of it must
    leave out; none when `directory` is itself a server corner's (nothing inside a corner is masked)."""
    return [d for d in server_dirs() if d != directory and is_within(d, directory)]


def masked(real: str, directory: str) -> bool:
    """Whether the real path `real`, found in a listing or search of the real `directory`, lies in a server
    directory that `directory` does not lie in itself."""
    return any(is_within(real, d) and not is_within(directory, d) for d in server_dirs())


# ---- confinement -------------------------------------------------------------------------------------------

def resolve(path: str, *, relative_to: str | None = None) -> str:
    if not isinstance(path, str) or not path or "\x00" in path:
        raise BadRequest("A path must be a non-empty string", kind="Query")
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    if not os.path.isabs(expanded):
        if relative_to is None:
            raise BadRequest(f"Path must be absolute: {path}", kind="Query")
        expanded = os.path.join(relative_to, expanded)
    return os.path.realpath(expanded)


def confine(path: str, bases: list[str] | tuple[str, ...], *, relative_to: str | None = None) -> str:
    """Resolve `path` (relative paths against `relative_to`) and return its real path if it lies inside
    one of `bases` and is admitted there (see the module's doc: the server's own directories); raise
    OutsideRoots otherwise. The bases are resolved too."""
    real = resolve(path, relative_to=relative_to)
    if _inside(real, bases):
        return real
    raise OutsideRoots(path)


def within_any(path: str, bases: list[str] | tuple[str, ...]) -> bool:
    return _inside(os.path.realpath(path), bases)


def _inside(real: str, bases) -> bool:
    # A base that `real` (a real path: absolute, normal, no symlink anywhere) lies within as written is a
    # leading part of a real path, so it is real itself: resolving it would give it back unchanged. Only
    # when no base matches as written are they resolved (a base given through a symlink, or not normal).
    owned, corners = _owned_and_corners()
    guarding = [d for d in owned if is_within(real, d)]

    def admits(base: str) -> bool:
        if not is_within(real, base):
            return False
        if any(is_within(base, d) for d in owned) and not any(is_within(base, c) for c in corners):
            return False  # a base inside the server's own directories (not a corner of theirs) is none
        # A path inside a server directory only through a base inside that directory too.
        return all(is_within(base, d) for d in guarding)

    if any(admits(base) for base in bases):
        return True
    return any(admits(os.path.realpath(base)) for base in bases if not is_within(real, base))
