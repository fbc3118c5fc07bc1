"""What the agent's edit tools (edit, write, apply_patch) do after writing files, as opencode does: format each
file, then let its language servers check it and hand the errors back for the tool's output and metadata."""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from agentserver.context import RuntimeContext
from projects_app.formatters import format_file
from projects_app.lsp.service import edit_diagnostics, render

log = logging.getLogger(__name__)


@dataclass
class EditFeedback:
    output: str  # appended to the tool's output ("" when the files are clean)
    diagnostics: dict  # path → LSP diagnostics: the tool's `metadata.diagnostics`


async def after_edit(*, context: RuntimeContext, config: dict, files: list[str],
                     other_files: bool = False) -> EditFeedback:
    """`other_files`: also report up to five other files' errors (write does, edit does not)."""
    for file in files:
        await asyncio.to_thread(format_file, context=context, config=config, path=file)
    try:
        diagnostics = await edit_diagnostics(context=context, config=config, files=files)
    except Exception:  # noqa: BLE001 - a failing language server must never fail the edit itself
        log.exception("language-server diagnostics after editing %s", files)
        diagnostics = {}
    return EditFeedback(output=render(diagnostics, files, other_files=other_files), diagnostics=diagnostics)
