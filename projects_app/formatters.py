"""Formatters run on a file the agent edited: opencode's list (ruff, prettier, gofmt, rustfmt, clang-format,
...) — each enabled when its program is there and, for some, when the project shows it uses it — merged with
the config's `formatter` map (`{name: {command, extensions, environment, disabled}}`; `formatter: false` turns
all off). The first enabled formatter for the file's extension runs, in the user's sandbox."""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from agentserver.context import RuntimeContext
from agentserver.sandbox import launcher as sandbox
from projects_app.builtin_overlay import overlay
from projects_app.config import effective_config

log = logging.getLogger(__name__)

FORMAT_TIMEOUT = 30.0

JS_LIKE = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
WEB = JS_LIKE + (".html", ".htm", ".css", ".scss", ".sass", ".less", ".vue", ".svelte", ".json", ".jsonc",
                 ".yaml", ".yml", ".toml", ".xml", ".md", ".mdx", ".graphql", ".gql")


def which(program: str) -> str | None:
    """On PATH, or beside this server's Python (a formatter pinned in requirements.txt, such as ruff)."""
    search = os.pathsep.join([os.environ.get("PATH", ""), os.path.dirname(sys.executable)])
    return shutil.which(program, path=search)


def find_up(context: RuntimeContext, name: str) -> list[str]:
    """`name` in the instance directory and each parent up to the project's top, nearest first."""
    return [os.path.join(d, name) for d in context.directories_up() if os.path.exists(os.path.join(d, name))]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def _package_uses(context: RuntimeContext, manifest: str, sections: tuple[str, ...], package: str) -> bool:
    for found in find_up(context, manifest):
        try:
            data = json.loads(_read(found) or "{}")
        except ValueError:
            continue
        if isinstance(data, dict) and any(isinstance(data.get(s), dict) and package in data[s] for s in sections):
            return True
    return False


def _node_bin(context: RuntimeContext, name: str) -> str | None:
    for directory in context.directories_up():
        candidate = os.path.join(directory, "node_modules", ".bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    return which(name)


@dataclass(frozen=True)
class Formatter:
    name: str
    extensions: tuple[str, ...]
    # The argv (with "$FILE") when enabled for this context, else None.
    command: Callable[[RuntimeContext], list[str] | None]
    environment: dict[str, str] = field(default_factory=dict)


def _program(name: str, *args: str) -> Callable[[RuntimeContext], list[str] | None]:
    def command(context: RuntimeContext) -> list[str] | None:
        found = which(name)
        return [found, *args] if found else None
    return command


def _with_config(configs: tuple[str, ...], name: str, *args: str) -> Callable[[RuntimeContext], list[str] | None]:
    def command(context: RuntimeContext) -> list[str] | None:
        if not any(find_up(context, config) for config in configs):
            return None
        found = which(name)
        return [found, *args] if found else None
    return command


def _prettier(context: RuntimeContext) -> list[str] | None:
    if not _package_uses(context, "package.json", ("dependencies", "devDependencies"), "prettier"):
        return None
    found = _node_bin(context, "prettier")
    return [found, "--write", "$FILE"] if found else None


def _biome(context: RuntimeContext) -> list[str] | None:
    if not any(find_up(context, c) for c in ("biome.json", "biome.jsonc", ".biome.json", ".biome.jsonc")):
        return None
    found = _node_bin(context, "biome")
    return [found, "format", "--write", "$FILE"] if found else None


def _ruff(context: RuntimeContext) -> list[str] | None:
    """ruff when the project configures it or lists it as a dependency (as opencode decides)."""
    found = which("ruff")
    if found is None:
        return None
    command = [found, "format", "$FILE"]
    for config in ("pyproject.toml", "ruff.toml", ".ruff.toml"):
        hits = find_up(context, config)
        if hits and (config != "pyproject.toml" or "[tool.ruff" in _read(hits[0])):
            return command
    for manifest in ("requirements.txt", "pyproject.toml", "Pipfile"):
        hits = find_up(context, manifest)
        if hits and "ruff" in _read(hits[0]):
            return command
    return None


def _uv(context: RuntimeContext) -> list[str] | None:
    if _ruff(context):
        return None
    found = which("uv")
    return [found, "format", "--", "$FILE"] if found else None


def _pint(context: RuntimeContext) -> list[str] | None:
    if _package_uses(context, "composer.json", ("require", "require-dev"), "laravel/pint"):
        return ["./vendor/bin/pint", "$FILE"]
    return None


BUILT_IN = (
    Formatter("gofmt", (".go",), _program("gofmt", "-w", "$FILE")),
    Formatter("mix", (".ex", ".exs", ".eex", ".heex", ".leex", ".neex", ".sface"), _program("mix", "format", "$FILE")),
    Formatter("prettier", WEB, _prettier),
    Formatter("biome", WEB, _biome),
    Formatter("zig", (".zig", ".zon"), _program("zig", "fmt", "$FILE")),
    Formatter("clang-format", (".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++", ".ino",
                               ".C", ".H"), _with_config((".clang-format",), "clang-format", "-i", "$FILE")),
    Formatter("ktlint", (".kt", ".kts"), _program("ktlint", "-F", "$FILE")),
    Formatter("ruff", (".py", ".pyi"), _ruff),
    Formatter("air", (".R",), _program("air", "format", "$FILE")),
    Formatter("uv", (".py", ".pyi"), _uv),
    Formatter("rubocop", (".rb", ".rake", ".gemspec", ".ru"), _program("rubocop", "--autocorrect", "$FILE")),
    Formatter("standardrb", (".rb", ".rake", ".gemspec", ".ru"), _program("standardrb", "--fix", "$FILE")),
    Formatter("htmlbeautifier", (".erb", ".html.erb"), _program("htmlbeautifier", "$FILE")),
    Formatter("dart", (".dart",), _program("dart", "format", "$FILE")),
    Formatter("ocamlformat", (".ml", ".mli"), _with_config((".ocamlformat",), "ocamlformat", "-i", "$FILE")),
    Formatter("terraform", (".tf", ".tfvars"), _program("terraform", "fmt", "$FILE")),
    Formatter("latexindent", (".tex",), _program("latexindent", "-w", "-s", "$FILE")),
    Formatter("gleam", (".gleam",), _program("gleam", "format", "$FILE")),
    Formatter("shfmt", (".sh", ".bash"), _program("shfmt", "-w", "$FILE")),
    Formatter("nixfmt", (".nix",), _program("nixfmt", "$FILE")),
    Formatter("rustfmt", (".rs",), _program("rustfmt", "$FILE")),
    Formatter("pint", (".php",), _pint),
    Formatter("ormolu", (".hs",), _program("ormolu", "-i", "$FILE")),
    Formatter("cljfmt", (".clj", ".cljs", ".cljc", ".edn"), _program("cljfmt", "fix", "--quiet", "$FILE")),
    Formatter("dfmt", (".d",), _program("dfmt", "-i", "$FILE")),
)


def _configured(name: str, item: dict, existing: Formatter | None) -> Formatter | None:
    command = item.get("command")
    if not (isinstance(command, list) and command and all(isinstance(c, str) and c for c in command)):
        return existing  # without a command an entry cannot replace a built-in's detection
    extensions = item.get("extensions")
    if not (isinstance(extensions, list) and all(isinstance(e, str) for e in extensions)):
        extensions = list(existing.extensions) if existing else []
    environment = item.get("environment") if isinstance(item.get("environment"), dict) else {}
    environment = {k: v for k, v in environment.items() if isinstance(k, str) and isinstance(v, str)}
    argv = list(command)
    return Formatter(name, tuple(extensions), lambda context: argv, environment)


def formatters_for(config: dict) -> list[Formatter]:
    return list(overlay(config.get("formatter"), {f.name: f for f in BUILT_IN}, _configured).values())


def formatter_status(*, context: RuntimeContext) -> list[dict]:
    """Every formatter of this directory (built-in and configured), `{name, extensions, enabled}` (enabled:
    it would run after an edit)."""
    return [{"name": f.name, "extensions": list(f.extensions), "enabled": f.command(context) is not None}
            for f in formatters_for(effective_config(context))]


def _expose(program: str) -> list[str]:
    found = program if os.path.isabs(program) else which(program)
    return [os.path.realpath(found)] if found else []


def format_file(*, context: RuntimeContext, config: dict, path: str) -> str | None:
    """Format `path` with the first enabled formatter for its extension; the formatter's name, or None."""
    extension = os.path.splitext(path)[1]
    for formatter in formatters_for(config):
        if extension not in formatter.extensions:
            continue
        command = formatter.command(context)
        if command is None:
            continue
        argv = [part.replace("$FILE", path) for part in command]
        try:
            done = sandbox.run(context.user, argv, cwd=context.directory, env=formatter.environment,
                               timeout=FORMAT_TIMEOUT, expose=_expose(argv[0]), offline=True)
        except (OSError, subprocess.TimeoutExpired, sandbox.SandboxUnavailable) as error:
            log.warning("formatter %s failed on %s: %s", formatter.name, path, error)
            return None
        if done.returncode != 0:
            log.warning("formatter %s exited %s on %s: %s", formatter.name, done.returncode, path,
                        done.stderr.decode(errors="replace")[:500])
        return formatter.name
    return None
