"""The one confinement function. Every file access of the server (routes, tools, PTY cwd, workspaces)
resolves its path here: symlinks resolved, then checked to lie inside one of the allowed bases."""
import os

from agentserver.errors import BadRequest, Forbidden


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
    one of `bases`; raise OutsideRoots otherwise. The bases are resolved too."""
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
    if any(is_within(real, base) for base in bases):
        return True
    return any(is_within(real, os.path.realpath(base)) for base in bases)
