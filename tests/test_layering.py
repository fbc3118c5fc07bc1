"""The import contracts (.importlinter, docs/architecture.md) hold, and they would catch a new cycle: lint-imports
passes on the checkout and fails on a copy of it with a cycle planted in."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agentserver", "audit_app", "auth_app", "policy_app", "projects_app", "providers_app", "pty_app",
            "sessions_app", "tui_app", "web_app", "server", "usage_app")


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    command = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([str(command), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def copy_of_the_checkout(target: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "templates", "static"))
    (target / "tests").mkdir()
    for name in ("__init__.py", "import_contracts.py"):
        shutil.copy(ROOT / "tests" / name, target / "tests" / name)
    shutil.copy(ROOT / ".importlinter", target / ".importlinter")
    return target


def plant(copy: Path, module: str, line: str) -> None:
    path = copy / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + "\n\n" + line + "\n")


def test_the_checkout_keeps_every_import_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


PLANTED = {
    # An import inside a function closes a cycle as surely as one at the top of the module.
    "in-app cycle inside a function": (
        "providers_app.stream", "def _planted():\n    from providers_app import llm  # noqa: F401",
        "No cycles are allowed in providers_app"),
    # An import only a type checker follows closes a cycle too: the contracts do not exclude them.
    "a cycle through a type-checking import": (
        "agentserver.sandbox.process",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentserver.sandbox.launcher import Launch  # noqa: F401",
        "These 2 modules import each other in a cycle"),
    "a cycle across apps": (
        "agentserver.clock", "from projects_app import models  # noqa: F401",
        "These 2 modules import each other in a cycle"),
    "plumbing importing an app": (
        "agentserver.ids", "from sessions_app import models  # noqa: F401",
        "agentserver is not allowed to import sessions_app"),
    "a lower app importing a higher one": (
        "projects_app.files", "from providers_app import selectors  # noqa: F401",
        "projects_app is not allowed to import providers_app"),
    "a service importing a view": (
        "sessions_app.services.revert", "from sessions_app.api import sessions  # noqa: F401",
        "sessions_app.services is not allowed to import sessions_app.api"),
    "an app importing another app's routes": (
        "providers_app.selectors", "from projects_app.api import config  # noqa: F401",
        "is not allowed to import the route module"),
    # Importing a module runs its package's __init__ first: a registry in the __init__ that imports the
    # package's modules, which import from the package, is a cycle (the tools' registry once was).
    "a package __init__ importing its own modules": (
        "sessions_app.runtime.tools.__init__", "from sessions_app.runtime.tools import bash  # noqa: F401",
        "modules import each other in a cycle:\n\n- sessions_app.runtime.tools -> sessions_app.runtime.tools.bash"),
    "the audit log importing an app it records": (
        "audit_app.log", "from auth_app import tokens  # noqa: F401",
        "audit_app is not allowed to import auth_app"),
    "terminals reaching into sessions": (
        "pty_app.services", "from sessions_app import selectors  # noqa: F401",
        "pty_app is not allowed to import sessions_app"),
}


@pytest.mark.parametrize("planted", list(PLANTED), ids=list(PLANTED))
def test_a_planted_cycle_breaks_the_contracts(tmp_path, planted):
    module, line, complaint = PLANTED[planted]
    copy = copy_of_the_checkout(tmp_path)
    assert lint_imports(copy).returncode == 0  # the copy itself is clean

    plant(copy, module, line)
    result = lint_imports(copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout
    assert complaint in result.stdout, result.stdout
