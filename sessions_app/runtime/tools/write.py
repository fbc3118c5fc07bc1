"""write: create or overwrite a file (an existing one must have been read first in this session)."""
from __future__ import annotations

import asyncio
import os

from projects_app.edit_feedback import after_edit
from sessions_app.runtime.tools import diffs, filetime
from sessions_app.runtime.tools.base import (Tool, ToolContext, ToolError, ToolResult, confine, publish,
                                             relative_title, require_str, schema)

DESCRIPTION = """Writes a file to the local filesystem.

Usage:
- This tool will overwrite the existing file if there is one at the provided path.
- If this is an existing file, you MUST use the Read tool first to read the file's contents. This tool will fail if you did not read the file first.
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly required.
- NEVER proactively create documentation files (*.md) or README files. Only create documentation files if explicitly requested by the User.
- Only use emojis if the user explicitly requests it. Avoid writing emojis to files unless asked."""


def read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read()


def write_text(path: str, content: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8", newline="") as handle:
        handle.write(content)
    if os.path.exists(path):
        os.chmod(temp, os.stat(path).st_mode & 0o7777)
    os.replace(temp, path)


class WriteTool(Tool):
    id = "write"
    description = DESCRIPTION
    parameters = schema({
        "content": {"type": "string", "description": "The content to write to the file"},
        "filePath": {"type": "string",
                     "description": "The absolute path to the file to write (must be absolute, not relative)"},
    }, ["content", "filePath"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        content = require_str(args, "content", allow_empty=True)
        path = await confine(ctx, require_str(args, "filePath"))
        if os.path.isdir(path):
            raise ToolError(f"Path is a directory, not a file: {path}")
        exists = os.path.exists(path)
        before = await asyncio.to_thread(read_text, path) if exists else ""
        if exists:
            await filetime.assert_read(ctx, path)
        title = relative_title(ctx, path)
        diff = diffs.unified(path, before, content)
        await ctx.ask("edit", [title], metadata={"filepath": path, "diff": diff}, always=["*"])
        await asyncio.to_thread(write_text, path, content)
        await publish(ctx, "file.edited", {"file": path})
        checked = await after_edit(context=ctx.context, config=await ctx.get_config(), files=[path],
                                   other_files=True)
        return ToolResult(output="Wrote file successfully." + checked.output, title=title,
                          metadata={"diagnostics": checked.diagnostics, "filepath": path, "exists": exists})
