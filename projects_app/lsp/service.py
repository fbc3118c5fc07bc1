"""What views, tools and instance.dispose call: status, symbols, dispose, and an edit's diagnostics, with
opencode's rendering of them for the model."""
from __future__ import annotations

import os

from django.conf import settings

from agentserver.context import RuntimeContext
from projects_app.lsp.manager import MANAGER

SEVERITY = {1: "ERROR", 2: "WARN", 3: "INFO", 4: "HINT"}
MAX_PER_FILE = 20
MAX_OTHER_FILES = 5
ANSWER_TIMEOUT = 15.0


def lsp_status(*, context: RuntimeContext) -> list[dict]:
    """The user's servers this instance uses: `{id, name, root, status}`."""
    if not MANAGER.started:
        return []
    return MANAGER.call(MANAGER.status(context), ANSWER_TIMEOUT)


def symbol_search(*, context: RuntimeContext, query: str) -> list[dict]:
    """workspace/symbol on the instance's running servers (none running: none found, as in opencode)."""
    if not MANAGER.started:
        return []
    return MANAGER.call(MANAGER.workspace_symbols(context, query), ANSWER_TIMEOUT)


def lsp_dispose(*, user, directory: str | None) -> None:
    """Stop the user's servers of the instance at `directory`; None: all of the user's (global.dispose)."""
    if MANAGER.started:
        target = os.path.realpath(directory) if directory is not None else None
        MANAGER.call(MANAGER.dispose(user.pk, target), ANSWER_TIMEOUT)


async def edit_diagnostics(*, context: RuntimeContext, config: dict, files: list[str]) -> dict[str, list[dict]]:
    """After an edit: the files' servers told, their diagnostics awaited (briefly), every file's diagnostics."""
    if config.get("lsp") is False:
        return {}
    return await MANAGER.run(MANAGER.check(context, config, files, wait=settings.LSP_DIAGNOSTICS_WAIT_SECONDS,
                                           quiet=settings.LSP_DIAGNOSTICS_QUIET_SECONDS))


def pretty(diagnostic: dict) -> str:
    start = diagnostic.get("range", {}).get("start", {})
    severity = SEVERITY.get(diagnostic.get("severity") or 1, "ERROR")
    return f"{severity} [{start.get('line', 0) + 1}:{start.get('character', 0) + 1}] {diagnostic.get('message', '')}"


def report(file: str, diagnostics: list[dict]) -> str:
    """The errors of one file as opencode shows them to the model ("" when it has none)."""
    errors = [d for d in diagnostics if (d.get("severity") or 1) == 1]
    if not errors:
        return ""
    more = len(errors) - MAX_PER_FILE
    lines = "\n".join(pretty(d) for d in errors[:MAX_PER_FILE])
    suffix = f"\n... and {more} more" if more > 0 else ""
    return f'<diagnostics file="{file}">\n{lines}{suffix}\n</diagnostics>'


def render(diagnostics: dict[str, list[dict]], files: list[str], *, other_files: bool) -> str:
    """The text an edit tool appends: the edited files' errors, and (write) up to five other files'."""
    out = ""
    for file in files:
        block = report(file, diagnostics.get(file, []))
        if block:
            out += f"\n\nLSP errors detected in this file, please fix:\n{block}"
    if other_files:
        shown = 0
        for file, items in diagnostics.items():
            if file in files or shown >= MAX_OTHER_FILES:
                continue
            block = report(file, items)
            if block:
                shown += 1
                out += f"\n\nLSP errors detected in other files:\n{block}"
    return out
