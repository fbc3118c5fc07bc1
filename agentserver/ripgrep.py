"""Where ripgrep is: the `ripgrep` wheel installs `rg` next to the interpreter; else whatever is on PATH.
And what a search of a user's directory leaves out: the server's own directories inside it."""
import os
import re
import shutil
import sys

from agentserver import paths

_GLOB_SPECIAL = re.compile(r"([\\*?\[\]{}!])")


def binary() -> str | None:
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("rg")


def masked_prefixes(directory: str) -> list[str]:
    """The server directories inside `directory` (a real path) as `/`-separated paths relative to it: a
    search run there (cwd `directory`, path `./`) must not return anything below them."""
    return [os.path.relpath(owned, directory) for owned in paths.masked_in(directory)]


def exclusions(directory: str) -> list[str]:
    """ripgrep arguments that keep a search with cwd `directory` out of the server's own directories there
    (anchored to the cwd; put them after any glob of the caller's, since a later glob wins)."""
    args: list[str] = []
    for rel in masked_prefixes(directory):
        args += ["--glob", "!/" + _GLOB_SPECIAL.sub(r"\\\1", rel)]
    return args


def is_masked(rel: str, prefixes: list[str]) -> bool:
    """Whether a search result `rel` (relative to the searched directory, `./` or not) lies in one of
    `prefixes` (masked_prefixes of that directory): filtered as well, whatever the globs did."""
    rel = rel.removeprefix("./")
    return any(rel == prefix or rel.startswith(prefix + "/") for prefix in prefixes)
