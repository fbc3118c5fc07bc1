"""edit: exact string replacement, with a whitespace-tolerant fallback when the exact text is absent."""
from __future__ import annotations

import asyncio
import os

from projects_app.edit_feedback import after_edit
from sessions_app.runtime.tools import diffs, filetime
from sessions_app.runtime.tools.base import (Tool, ToolContext, ToolError, ToolResult, confine, publish,
                                             relative_title, require_str, schema)
from sessions_app.runtime.tools.write import read_text, write_text

NOT_FOUND = "oldString not found in content"
MULTIPLE = ("Found multiple matches for oldString. Provide more surrounding lines in oldString to identify the "
            "correct match.")

DESCRIPTION = """Performs exact string replacements in files.

Usage:
- You must use your `Read` tool at least once in the conversation before editing. This tool will error if you attempt an edit without reading the file.
- When editing text from Read tool output, ensure you preserve the exact indentation (tabs/spaces) as it appears AFTER the line number prefix. The line number prefix format is: line number + colon + space (e.g., `1: `). Everything after that space is the actual file content to match. Never include any part of the line number prefix in the oldString or newString.
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly required.
- Only use emojis if the user explicitly requests it. Avoid adding emojis to files unless asked.
- The edit will FAIL if `oldString` is not found in the file with an error "oldString not found in content".
- The edit will FAIL if `oldString` is found multiple times in the file with an error "Found multiple matches for oldString. Provide more surrounding lines in oldString to identify the correct match." Either provide a larger string with more surrounding context to make it unique or use `replaceAll` to change every instance of `oldString`.
- Use `replaceAll` for replacing and renaming strings across the file. This parameter is useful if you want to rename a variable for instance."""


def _line_trimmed_candidates(content: str, old: str) -> list[str]:
    """Spans of `content` whose lines equal `old`'s lines once surrounding whitespace is ignored."""
    wanted = [line.strip() for line in old.strip("\n").split("\n")]
    lines = content.split("\n")
    found = []
    for start in range(0, len(lines) - len(wanted) + 1):
        if all(lines[start + i].strip() == wanted[i] for i in range(len(wanted))):
            found.append("\n".join(lines[start:start + len(wanted)]))
    return found


def replace(content: str, old: str, new: str, replace_all: bool = False) -> str:
    if old == new:
        raise ToolError("No changes to apply: oldString and newString are identical.")
    count = content.count(old)
    if count == 1 or (count > 1 and replace_all):
        return content.replace(old, new) if replace_all else content.replace(old, new, 1)
    if count > 1:
        raise ToolError(MULTIPLE)
    candidates = _line_trimmed_candidates(content, old) if old.strip() else []
    if not candidates:
        raise ToolError(NOT_FOUND)
    if len(set(candidates)) > 1 and not replace_all:
        raise ToolError(MULTIPLE)
    if len(candidates) > 1 and not replace_all:
        raise ToolError(MULTIPLE)
    for candidate in dict.fromkeys(candidates):
        content = content.replace(candidate, new) if replace_all else content.replace(candidate, new, 1)
    return content


class EditTool(Tool):
    id = "edit"
    description = DESCRIPTION
    parameters = schema({
        "filePath": {"type": "string", "description": "The absolute path to the file to modify"},
        "oldString": {"type": "string", "description": "The text to replace"},
        "newString": {"type": "string",
                      "description": "The text to replace it with (must be different from oldString)"},
        "replaceAll": {"type": "boolean", "description": "Replace all occurrences of oldString (default false)"},
    }, ["filePath", "oldString", "newString"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        old = require_str(args, "oldString", allow_empty=True)
        new = require_str(args, "newString", allow_empty=True)
        replace_all = bool(args.get("replaceAll"))
        if old == new:
            raise ToolError("No changes to apply: oldString and newString are identical.")
        path = await confine(ctx, require_str(args, "filePath"))
        title = relative_title(ctx, path)
        if old == "":
            before = await asyncio.to_thread(read_text, path) if os.path.isfile(path) else ""
            after = new
        else:
            if not os.path.exists(path):
                raise ToolError(f"File {path} not found")
            if os.path.isdir(path):
                raise ToolError(f"Path is a directory, not a file: {path}")
            await filetime.assert_read(ctx, path)
            before = await asyncio.to_thread(read_text, path)
            after = replace(before, old, new, replace_all)
        diff = diffs.unified(path, before, after)
        await ctx.ask("edit", [title], metadata={"filepath": path, "diff": diff}, always=["*"])
        await asyncio.to_thread(write_text, path, after)
        await publish(ctx, "file.edited", {"file": path})
        filediff = diffs.filediff(path, before, after)
        checked = await after_edit(context=ctx.context, config=await ctx.get_config(), files=[path])
        return ToolResult(output="Edit applied successfully." + checked.output, title=title,
                          metadata={"diagnostics": checked.diagnostics, "diff": diff, "filediff": filediff,
                                    "filepath": path})
