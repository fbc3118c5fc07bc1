"""docs/architecture.md § 2 names every package and module of the server by its one job, and names none that
is gone: a module added (or an app, such as a new `*_app/`) without its line there fails here, with the lines
to write. Apps are found on disk (every top-level package with an apps.py) besides .importlinter's root
packages, so a new app is covered before anyone lists it. Migrations are left out."""
import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
NOT_SERVER_CODE = {"tests", "bench", "scripts", "deploy", "docs"}


def server_packages() -> list[str]:
    on_disk = {path.parent.name for path in ROOT.glob("*/apps.py")}
    contracts = configparser.ConfigParser()
    contracts.read(ROOT / ".importlinter")
    listed = set(contracts["importlinter"]["root_packages"].split())
    return sorted((on_disk | listed) - NOT_SERVER_CODE)


def module_names(package: str) -> set[str]:
    """Each module as its path (`sessions_app/runtime/scope.py`), each package as its directory
    (`sessions_app/runtime/`)."""
    names = set()
    for path in (ROOT / package).rglob("*.py"):
        relative = path.relative_to(ROOT)
        if "migrations" in relative.parts or "__pycache__" in relative.parts:
            continue
        if path.name == "__init__.py":
            names.add(relative.parent.as_posix() + "/")
        else:
            names.add(relative.as_posix())
    return names


def named_in_architecture() -> set[str]:
    return set(re.findall(r"`([^`\s]+)`", ARCHITECTURE.read_text()))


def test_every_module_of_every_app_has_its_line_in_the_architecture():
    packages = server_packages()
    assert {"agentserver", "sessions_app", "web_app", "server"} <= set(packages)
    named = named_in_architecture()
    missing = sorted(name for package in packages for name in module_names(package) if name not in named)
    assert not missing, (
        f"docs/architecture.md § 2 does not name {len(missing)} module(s); add one line each, under its "
        "package's heading, saying its one job:\n" + "\n".join(f"- `{name}` — …" for name in missing))


def test_the_architecture_names_no_module_that_is_gone():
    packages = tuple(f"{package}/" for package in server_packages())
    named = {name for name in named_in_architecture()
             if name.startswith(packages) and name.endswith((".py", "/")) and not re.search(r"[<*{]", name)}
    gone = sorted(name for name in named if not (ROOT / name).exists())
    assert not gone, "docs/architecture.md names modules that do not exist any more:\n" + "\n".join(gone)
