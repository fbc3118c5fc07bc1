"""The import contracts (.importlinter, docs/architecture.md) hold, and they would catch a new cycle: lint-imports
passes on the checkout and fails on a copy of it with a cycle planted in. And an app's tables are touched only
through its store: no module of a gated app outside its gateways runs a query."""
import os
import re
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


# ---- one gateway per app's tables ------------------------------------------------------------------------

# What touches a table: the ORM's managers (`Model.objects`), a refresh, the compiled statements of
# agentserver.db.sql, a raw cursor.
TABLE_ACCESS = re.compile(r"\.objects\b|\.refresh_from_db\(|\bsql\.(?:Query|Change|insert|update)\b|\bcursor\(")
# Where an app may touch its tables: its store (the gateway), its selectors (reads scoped to the caller), the
# admin (Django's back office works on querysets), its migrations and management commands.
GATEWAYS = ("store", "store.py", "selectors.py", "admin.py", "migrations", "management")
GATED_APPS = ("sessions_app", "tui_app", "web_app", "pty_app", "projects_app", "auth_app", "providers_app",
              "usage_app", "audit_app", "policy_app")


def table_access_outside_the_gateways(root: Path, app: str) -> list[str]:
    """`path:line: text` of each line of the app's modules outside its gateways that touches a table."""
    found = []
    for path in sorted((root / app).rglob("*.py")):
        if path.relative_to(root / app).parts[0] in GATEWAYS:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if TABLE_ACCESS.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize("app", GATED_APPS)
def test_only_the_apps_store_and_selectors_touch_its_tables(app):
    assert table_access_outside_the_gateways(ROOT, app) == []


STRAYS = {
    "a manager in the runtime": ("sessions_app/runtime/leases.py",
                                 "def _planted(session_id):\n    return Session.objects.filter(id=session_id)"),
    "a compiled statement in a service": ("sessions_app/services/revert.py",
                                          "_PLANTED = sql.Query(lambda message_id: None)"),
    "a raw cursor in a tool": ("sessions_app/runtime/tools/todo.py",
                               "def _planted():\n    with connection.cursor() as c:\n        c.execute('select 1')"),
    "a refresh in a view": ("sessions_app/api/prompt.py", "def _planted(session):\n    session.refresh_from_db()"),
}


@pytest.mark.parametrize("stray", list(STRAYS), ids=list(STRAYS))
def test_a_stray_query_outside_the_gateways_is_caught(tmp_path, stray):
    module, code = STRAYS[stray]
    shutil.copytree(ROOT / "sessions_app", tmp_path / "sessions_app",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "templates", "static"))
    assert table_access_outside_the_gateways(tmp_path, "sessions_app") == []  # the copy itself is clean

    path = tmp_path / module
    path.write_text(path.read_text() + "\n\n" + code + "\n")
    found = table_access_outside_the_gateways(tmp_path, "sessions_app")
    assert len(found) == 1 and found[0].startswith(module), found
