"""What a bash command asks permission for: one pattern per simple command ("git status --short"), an
`always` prefix per command ("git status *"), and the paths that file-touching commands name."""
from __future__ import annotations

import shlex

OPERATORS = {";", "&&", "||", "|", "&", "|&", ";;"}
# How many leading words name "the command" for an `always` answer (opencode's arity table, abridged).
ARITY = {
    "git": 2, "npm": 2, "pnpm": 2, "yarn": 2, "bun": 2, "deno": 2, "cargo": 2, "go": 2, "pip": 2, "pip3": 2,
    "uv": 2, "poetry": 2, "docker": 2, "kubectl": 2, "gh": 2, "make": 2, "brew": 2, "apt": 2, "apt-get": 2,
    "npx": 2, "dotnet": 2, "mvn": 2, "gradle": 2, "terraform": 2, "systemctl": 2, "python": 2, "python3": 2,
    "node": 2,
}
PATH_COMMANDS = {"cd", "rm", "cp", "mv", "mkdir", "touch", "chmod", "chown", "cat", "ls", "rmdir", "ln", "head",
                 "tail", "less", "more"}


def simple_commands(command: str) -> list[list[str]]:
    """Token lists of the simple commands in `command`; falls back to whitespace words on bad quoting."""
    out: list[list[str]] = []
    for line in command.splitlines():
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:
            tokens = line.split()
        current: list[str] = []
        for token in tokens:
            if token in OPERATORS or set(token) <= set(";&|"):
                if current:
                    out.append(current)
                current = []
            elif token in ("(", ")", "{", "}"):
                continue
            else:
                current.append(token)
        if current:
            out.append(current)
    return out


def _skip_assignments(tokens: list[str]) -> list[str]:
    index = 0
    while index < len(tokens) and "=" in tokens[index] and not tokens[index].startswith("=") \
            and tokens[index].split("=", 1)[0].replace("_", "").isalnum():
        index += 1
    return tokens[index:]


def permission_patterns(command: str) -> tuple[list[str], list[str]]:
    patterns: list[str] = []
    always: list[str] = []
    for tokens in simple_commands(command):
        words = _skip_assignments(tokens)
        if not words:
            continue
        text = " ".join(words)
        if text not in patterns:
            patterns.append(text)
        arity = ARITY.get(words[0], 1)
        prefix = [w for w in words[:arity] if not w.startswith("-")] or words[:1]
        pattern = " ".join(prefix) + " *"
        if pattern not in always:
            always.append(pattern)
    if not patterns:
        patterns, always = [command.strip()], [command.strip().split(" ")[0] + " *"]
    return patterns, always


def path_arguments(command: str) -> list[str]:
    """Arguments of file-touching commands that look like paths (absolute, ~, or containing ..)."""
    found: list[str] = []
    for tokens in simple_commands(command):
        words = _skip_assignments(tokens)
        if not words or words[0] not in PATH_COMMANDS:
            continue
        for word in words[1:]:
            if word.startswith("-") or word in (">", "<", ">>"):
                continue
            if word.startswith("/") or word.startswith("~") or ".." in word:
                found.append(word)
    return found
