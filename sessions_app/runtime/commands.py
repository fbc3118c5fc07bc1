"""The command catalogue of a context (reference §3.7, §5.12): built-ins `init` and `review`, the config's
`command` map, `.opencode/command(s)/**/*.md` files between the directory and the worktree, and skills.
Later sources override earlier ones, except skills, which never shadow a command."""
from __future__ import annotations

import os
import re

from agentserver import paths
from sessions_app.runtime.frontmatter import parse_frontmatter  # noqa: F401  (part of this module's API)

INIT_TEMPLATE = """Create or update `AGENTS.md` for this repository.

The file is read by future coding-agent sessions before they start working here. Keep it short and useful:
every line should tell an agent something it would likely get wrong or waste time on without it.

Look at the repository first (build files, package manifests, CI configuration, existing docs such as
README, CONTRIBUTING, .cursorrules or CLAUDE.md) and then write down:

- how to install dependencies, build, lint and run the tests (including how to run a single test);
- the layout of the code: where things live and which modules own which job;
- conventions that are not obvious from the code: naming, error handling, formatting, commit style;
- traps: generated files not to edit, slow or flaky commands, environment variables that must be set.

If `AGENTS.md` already exists, improve it in place instead of rewriting it: keep what is still true, fix
what is wrong, add what is missing. Aim for about 20-40 lines. Do not invent commands you did not see.

Extra guidance from the user (may be empty):
$ARGUMENTS
"""

REVIEW_TEMPLATE = """You are a code reviewer. Review the requested changes and report concrete, actionable findings.

---

Input: $ARGUMENTS

---

What to review:
1. No input: the uncommitted changes (`git diff` and `git diff --cached`, plus untracked files).
2. A commit hash: that commit (`git show <hash>`).
3. A branch name: the branch against the current one (`git diff <branch>...HEAD`).
4. A pull request number or URL: that pull request (`gh pr diff <number>` when available).

Read enough of the surrounding code to judge each change. Look for bugs, missing error handling, security
problems, broken behaviour at edges, unclear names and missing tests. For every finding give the file and
line, what is wrong, why it matters and how to fix it. Order findings by severity. Do not modify files.
"""

COMMAND_DIRS = (".opencode/command", ".opencode/commands")
MAX_COMMAND_BYTES = 256 * 1024
_NUMBERED = re.compile(r"\$\d+")


def hints(template: str) -> list[str]:
    """The placeholders a template uses: `$1`, `$2`… (sorted as strings, like the reference) then `$ARGUMENTS`."""
    found = sorted(set(_NUMBERED.findall(template)))
    if "$ARGUMENTS" in template:
        found.append("$ARGUMENTS")
    return found


def _command(name: str, template: str, *, source: str = "command", description=None, agent=None, model=None,
             subtask=None) -> dict:
    out: dict = {"name": name}
    if isinstance(description, str):
        out["description"] = description
    if isinstance(agent, str) and agent:
        out["agent"] = agent
    if isinstance(model, str) and model:
        out["model"] = model
    out["source"] = source
    out["template"] = template
    if isinstance(subtask, bool):
        out["subtask"] = subtask
    out["hints"] = hints(template)
    return out


def file_commands(context) -> dict[str, dict]:
    found: dict[str, dict] = {}
    top = os.path.realpath(context.boundary)
    for base in reversed(context.directories_up()):  # outermost first: nearer files win
        for sub in COMMAND_DIRS:
            root = os.path.join(base, sub)
            if not os.path.isdir(root):
                continue
            for folder, dirs, files in os.walk(root):
                dirs.sort()
                for file in sorted(files):
                    if not file.endswith(".md"):
                        continue
                    real = os.path.realpath(os.path.join(folder, file))
                    if not paths.within_any(real, [top]) or not os.path.isfile(real):
                        continue
                    if os.path.getsize(real) > MAX_COMMAND_BYTES:
                        continue
                    name = os.path.relpath(os.path.join(folder, file), root)[:-3].replace(os.sep, "/")
                    with open(real, encoding="utf-8", errors="replace") as handle:
                        meta, body = parse_frontmatter(handle.read())
                    found[name] = _command(name, body.strip(), description=meta.get("description"),
                                           agent=meta.get("agent"), model=meta.get("model"),
                                           subtask=meta.get("subtask"))
    return found


def mcp_commands(context) -> dict[str, dict]:
    """MCP prompts (source "mcp"), their arguments mapped to `$1`, `$2`… in the rendered template. A server
    that is down or slow only loses its prompts, never the list."""
    try:
        from providers_app.mcp.registry import prompt_render, prompts_for

        found = {}
        for item in prompts_for(context):
            arguments = {name: f"${i + 1}" for i, name in enumerate(item.get("arguments") or [])}
            rendered = prompt_render(context=context, server=item["server"], name=item["prompt"],
                                     arguments=arguments)
            command = _command(item["name"], rendered.get("text") or "", source="mcp",
                               description=item.get("description") or "")
            command["hints"] = list(item.get("hints") or [])
            found[item["name"]] = command
        return found
    except Exception:
        return {}


def command_list(*, context, config: dict, include_mcp: bool = True) -> list[dict]:
    """Every command of the context, in catalogue order."""
    from sessions_app.runtime.tools.skill import discover

    commands: dict[str, dict] = {
        "init": _command("init", INIT_TEMPLATE, description="guided AGENTS.md setup"),
        "review": _command("review", REVIEW_TEMPLATE, subtask=True,
                           description="review changes [commit|branch|pr], defaults to uncommitted"),
    }
    for name, value in (config.get("command") or {}).items():
        if isinstance(value, dict) and isinstance(value.get("template"), str):
            commands[str(name)] = _command(str(name), value["template"], description=value.get("description"),
                                           agent=value.get("agent"), model=value.get("model"),
                                           subtask=value.get("subtask"))
    try:
        commands.update(file_commands(context))
    except OSError:
        pass
    if include_mcp:
        commands.update(mcp_commands(context))
    try:
        skills = discover(context)
    except OSError:
        skills = {}
    for skill in skills.values():
        if skill["name"] in commands:
            continue
        base = os.path.dirname(skill["location"])
        template = "\n".join([skill["content"], "", f"Base directory for this skill: {base}",
                              "Relative paths in this skill (e.g., scripts/, references/) are relative to this "
                              "base directory."])
        commands[skill["name"]] = _command(skill["name"], template, source="skill",
                                           description=skill.get("description") or "")
        commands[skill["name"]]["hints"] = []
    return list(commands.values())


def command_get(*, context, config: dict, name: str) -> dict | None:
    # MCP prompt commands are named server:prompt; asking the servers is only worth it for such a name.
    found = command_list(context=context, config=config, include_mcp=":" in name)
    return next((c for c in found if c["name"] == name), None)
