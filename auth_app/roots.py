"""Which directories may be a person's root, and the first admin's default one.

No root may lie inside the server's own directories (agentserver.paths.server_dirs: its code, data dir,
shared dir, virtualenv, tools, web app copy): everything there is refused to everyone whatever their roots
say, so such a root would admit nothing, and the checkout or the data dir handed out as a root is the mistake
this guards against. A root that merely contains one (a home directory holding the checkout) is fine: the
server's directories inside it are masked. Every place that sets roots checks here first (`manage.py roots`,
`manage.py bootstrap`, the admin's root form)."""
from __future__ import annotations

import os

from agentserver import paths
from agentserver.sandbox.host import (
    SYSTEM_DIRECTORIES,  # never a default root: the sandbox mounts none whole
)


class RootRefused(ValueError):
    """A directory that may not be a root; the message says why and what to do instead."""


def check_root(path: str) -> str:
    """The real path of `path` when it may be a root; RootRefused otherwise."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise RootRefused("A root must be a directory's path")
    real = os.path.realpath(os.path.expanduser(path.strip()))
    owned = paths.server_dir_of(real)
    if owned is not None:
        where = "is" if real == owned else "lies inside"
        raise RootRefused(
            f"{path} {where} the server's own directory {owned} (its code, data directory, virtualenv or "
            "tools), which no one may use, whatever their roots say. Choose a directory of projects outside "
            "it, or one that contains it (a home directory, say): the server's directories inside a root are "
            "hidden from its user.")
    return real


FALLBACK_ROOT = "/srv/projects"


def default_roots() -> list[str]:
    """The first admin's root when neither `bootstrap --root` nor AGENTSERVER_DEFAULT_ROOTS names one: the
    home directory of whoever runs the set-up (opencode's own starting point: its "Open project" dialog
    searches the home's folders), else the directory the checkout lies in, the first that is a directory,
    no system directory (/root, /tmp, /) and not inside the server's own directories; else /srv/projects,
    made if need be. RootRefused when none can be had."""
    from django.conf import settings

    candidates = [os.path.expanduser("~"), os.path.dirname(os.path.realpath(str(settings.BASE_DIR)))]
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if os.path.isdir(real) and real not in SYSTEM_DIRECTORIES and paths.server_dir_of(real) is None:
            return [real]
    # Run as root from a checkout in /root or /tmp (a fresh machine): a directory of projects made for it.
    try:
        os.makedirs(FALLBACK_ROOT, exist_ok=True)
    except OSError:
        pass
    else:
        return [os.path.realpath(FALLBACK_ROOT)]
    raise RootRefused(
        f"No default root for the first admin: neither the home directory ({candidates[0]}) nor the "
        f"checkout's parent ({candidates[1]}) will do (a system directory, or inside the server's own "
        "directories). Set AGENTSERVER_DEFAULT_ROOTS to a directory of projects, e.g. "
        "AGENTSERVER_DEFAULT_ROOTS=/srv/projects make serve")
