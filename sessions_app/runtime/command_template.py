"""A command's template + the caller's arguments → the prompt text and parts (reference §5.12 steps 2–5).

Shell substitutions (!`cmd`) run in the session's directory with the bash tool's environment allowlist (no
server secret reaches them), in their own process group, killed at SHELL_TIMEOUT_SECONDS."""
from __future__ import annotations

import os
import re
import subprocess

from agentserver import paths
from agentserver.sandbox import launcher as sandbox

ARGUMENT = re.compile(r"""\[Image\s+\d+\]|"[^"]*"|'[^']*'|[^\s"']+""", re.IGNORECASE)
QUOTES = re.compile(r"""^["']|["']$""")
PLACEHOLDER = re.compile(r"\$(\d+)")
SHELL = re.compile(r"!`([^`]+)`")
REFERENCE = re.compile(r"(?<![\w`])@(\.?[^\s`,.]*(?:\.[^\s`,.]+)*)")
SHELL_TIMEOUT_SECONDS = 30
MAX_SHELL_OUTPUT = 256 * 1024


def split_arguments(arguments: str) -> list[str]:
    """Quoted strings are one argument (quotes removed), `[Image N]` is one token, else whitespace splits."""
    return [QUOTES.sub("", raw) for raw in ARGUMENT.findall(arguments or "")]


def fill(template: str, arguments: str) -> str:
    """`$N` → argument N (the highest-numbered placeholder takes all the remaining ones), `$ARGUMENTS` → the
    raw string; with neither placeholder, non-empty arguments are appended after a blank line."""
    args = split_arguments(arguments)
    numbers = [int(n) for n in PLACEHOLDER.findall(template)]
    last = max(numbers, default=0)

    def value(match: re.Match) -> str:
        position = int(match.group(1))
        index = position - 1
        if index < 0 or index >= len(args):
            return ""
        if position == last:
            return " ".join(args[index:])
        return args[index]

    text = PLACEHOLDER.sub(value, template)
    uses_arguments = "$ARGUMENTS" in template
    text = text.replace("$ARGUMENTS", arguments or "")
    if not numbers and not uses_arguments and (arguments or "").strip():
        text = f"{text}\n\n{arguments}"
    return text


def _run(user, command: str, cwd: str, env: dict, roots: list[str] | None) -> str:
    from sessions_app.runtime.tools.bash import kill_group, shell_path

    try:
        process = sandbox.popen(user, [shell_path(), "-c", command], cwd=cwd, env=env, roots=roots,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except sandbox.SandboxUnavailable as error:
        return f"Error executing command: {error.message}"
    except OSError as error:
        return f"Error executing command: {error}"
    try:
        out, _ = process.communicate(timeout=SHELL_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        out, _ = process.communicate()
        out += f"\n[command timed out after {SHELL_TIMEOUT_SECONDS}s]".encode()
    return out[:MAX_SHELL_OUTPUT].decode("utf-8", errors="replace")


def substitute_shell(text: str, *, user, cwd: str, home: str, roots: list[str] | None = None) -> str:
    """Each !`cmd` becomes the command's stdout (run one after the other, in order), in `user`'s sandbox."""
    if not SHELL.search(text):
        return text
    from sessions_app.runtime.tools.bash import child_environment

    env = child_environment(home=home)
    return SHELL.sub(lambda m: _run(user, m.group(1), cwd, env, roots), text)


def reference_parts(text: str, *, context, roots: list[str], agent_names: set[str]) -> list[dict]:
    """`@path` naming an existing file or directory inside the user's roots → a file part (the prompt input
    handling expands it into synthetic read parts); `@name` of an agent → an agent part."""
    base = context.worktree if context.vcs else context.directory
    parts, seen = [], set()
    for match in REFERENCE.finditer(text):
        name = match.group(1)
        if not name or name in seen:
            continue
        seen.add(name)
        if name.startswith("~/"):
            if not roots:
                continue
            target = os.path.join(roots[0], name[2:])
        else:
            target = os.path.join(base, name)
        real = os.path.realpath(target)
        if os.path.exists(real) and paths.within_any(real, roots):
            directory = os.path.isdir(real)
            parts.append({"type": "file", "url": f"file://{real}", "filename": name,
                          "mime": "application/x-directory" if directory else "text/plain"})
        elif name in agent_names:
            parts.append({"type": "agent", "name": name})
    return parts


def expand(template: str, arguments: str, *, context, roots: list[str], agent_names: set[str]) -> list[dict]:
    """The prompt input parts of a command: its text, then file/agent parts for its @references."""
    text = fill(template, arguments)
    text = substitute_shell(text, user=context.user, cwd=context.directory,
                            home=roots[0] if roots else context.directory, roots=roots)
    text = text.strip()
    return [{"type": "text", "text": text},
            *reference_parts(text, context=context, roots=roots, agent_names=agent_names)]
