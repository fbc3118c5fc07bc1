"""Shared set-up for the fs/vcs tests: a repo with a few files, an ignored dir and a binary."""
from pathlib import Path

from tests.conftest import git


def populate(repo: Path) -> Path:
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "hello.py").write_text("def hello():\n    return 'hello world'\n")
    (repo / "src" / "util.py").write_text("VALUE = 42\n")
    (repo / ".gitignore").write_text("build/\n")
    (repo / "build").mkdir(exist_ok=True)
    (repo / "build" / "out.txt").write_text("hello from build\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    return repo


def params(persona, **extra) -> dict:
    return {"directory": str(persona.repo), **extra}
