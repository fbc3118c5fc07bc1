"""Where ripgrep is: the `ripgrep` wheel installs `rg` next to the interpreter; else whatever is on PATH."""
import os
import shutil
import sys


def binary() -> str | None:
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("rg")
