"""read: numbered lines of a file (1.18 format), a directory's entries, images/PDFs as attachments."""
from __future__ import annotations

import asyncio
import base64
import mimetypes
import os

from sessions_app.runtime.tools.base import (Tool, ToolContext, ToolError, ToolResult, confine, optional_int,
                                             relative_title, require_str, schema)

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
MAX_BYTES = 50 * 1024
LINE_SUFFIX = f"... (line truncated to {MAX_LINE} chars)"
BINARY_EXTENSIONS = {".zip", ".tar", ".gz", ".exe", ".dll", ".so", ".class", ".jar", ".war", ".7z", ".doc",
                     ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp", ".bin", ".dat", ".obj",
                     ".o", ".a", ".lib", ".wasm", ".pyc", ".pyo"}

DESCRIPTION = """Reads a file or directory from the local filesystem.

Usage:
- The filePath parameter should be an absolute path.
- By default, it reads up to 2000 lines starting from the beginning of the file.
- You can optionally specify a line offset and limit (especially handy for long files), but it's recommended to read the whole file by not providing these parameters.
- Any lines longer than 2000 characters will be truncated.
- Results are returned with each line prefixed by its line number as `<line>: <content>`, starting at 1.
- A directory path returns its entries, one per line, with a trailing / for subdirectories.
- You can call multiple tools in a single response. It is always better to speculatively read multiple potentially useful files in parallel.
- Image and PDF files are returned as attachments."""


def is_binary(path: str, size: int) -> bool:
    if os.path.splitext(path)[1].lower() in BINARY_EXTENSIONS:
        return True
    if size == 0:
        return False
    with open(path, "rb") as handle:
        sample = handle.read(4096)
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    odd = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return odd / len(sample) > 0.3


def read_lines(path: str, offset: int, limit: int) -> tuple[list[str], int, bool, bool]:
    """(lines from `offset`, total line count, more lines follow, cut at the byte cap)."""
    raw: list[str] = []
    size = count = 0
    more = cut = False
    with open(path, encoding="utf-8", errors="replace", newline=None) as handle:
        for text in handle:
            count += 1
            if count < offset:
                continue
            if len(raw) >= limit:
                more = True
                continue
            line = text.rstrip("\n")
            if len(line) > MAX_LINE:
                line = line[:MAX_LINE] + LINE_SUFFIX
            grow = len(line.encode()) + (1 if raw else 0)
            if size + grow > MAX_BYTES:
                cut = more = True
                break
            raw.append(line)
            size += grow
    return raw, count, more, cut


class ReadTool(Tool):
    id = "read"
    description = DESCRIPTION
    parameters = schema({
        "filePath": {"type": "string", "description": "The absolute path to the file or directory to read"},
        "offset": {"type": "number", "description": "The line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "The maximum number of lines to read (defaults to 2000)"},
    }, ["filePath"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        offset = optional_int(args, "offset")
        limit = optional_int(args, "limit")
        if offset is not None and offset < 1:
            raise ToolError("offset must be greater than or equal to 1")
        if limit is not None and limit < 1:
            raise ToolError("limit must be greater than or equal to 1")
        offset, limit = offset or 1, limit or DEFAULT_LIMIT
        requested = require_str(args, "filePath")
        probe = os.path.realpath(os.path.join(ctx.context.directory, os.path.expanduser(requested)))
        path = await confine(ctx, requested, kind="directory" if os.path.isdir(probe) else "file")
        await ctx.ask("read", [path], metadata={}, always=["*"])
        title = relative_title(ctx, path)
        if not os.path.exists(path):
            raise ToolError(self._missing(path))
        if os.path.isdir(path):
            return self._directory(path, title, offset, limit)
        mime = mimetypes.guess_type(path)[0] or ""
        if (mime.startswith("image/") and mime != "image/svg+xml") or mime == "application/pdf":
            return self._attachment(path, title, mime)
        if is_binary(path, os.path.getsize(path)):
            raise ToolError(f"Cannot read binary file: {path}")
        raw, count, more, cut = await asyncio.to_thread(read_lines, path, offset, limit)
        if count < offset and not (count == 0 and offset == 1):
            raise ToolError(f"Offset {offset} is out of range for this file ({count} lines)")
        output = f"<path>{path}</path>\n<type>file</type>\n<content>\n"
        output += "\n".join(f"{index + offset}: {line}" for index, line in enumerate(raw))
        last = offset + len(raw) - 1
        if cut:
            output += (f"\n\n(Output capped at {MAX_BYTES // 1024} KB. Showing lines {offset}-{last}. "
                       f"Use offset={last + 1} to continue.)")
        elif more:
            output += f"\n\n(Showing lines {offset}-{last} of {count}. Use offset={last + 1} to continue.)"
        else:
            output += f"\n\n(End of file - total {count} lines)"
        output += "\n</content>"
        return ToolResult(output=output, title=title, metadata={
            "preview": "\n".join(raw[:20]), "truncated": more or cut, "loaded": [], "filepath": path})

    @staticmethod
    def _missing(path: str) -> str:
        directory, base = os.path.dirname(path), os.path.basename(path).lower()
        try:
            near = [os.path.join(directory, item) for item in sorted(os.listdir(directory))
                    if base in item.lower() or item.lower() in base][:3]
        except OSError:
            near = []
        if near:
            return f"File not found: {path}\n\nDid you mean one of these?\n" + "\n".join(near)
        return f"File not found: {path}"

    @staticmethod
    def _directory(path: str, title: str, offset: int, limit: int) -> ToolResult:
        entries = sorted((name + "/" if os.path.isdir(os.path.join(path, name)) else name)
                         for name in os.listdir(path))
        sliced = entries[offset - 1: offset - 1 + limit]
        truncated = offset - 1 + len(sliced) < len(entries)
        footer = (f"\n(Showing {len(sliced)} of {len(entries)} entries. Use 'offset' parameter to read beyond "
                  f"entry {offset + len(sliced)})") if truncated else f"\n({len(entries)} entries)"
        output = "\n".join([f"<path>{path}</path>", "<type>directory</type>", "<entries>", "\n".join(sliced),
                            footer, "</entries>"])
        return ToolResult(output=output, title=title,
                          metadata={"preview": "\n".join(sliced[:20]), "truncated": truncated, "loaded": []})

    @staticmethod
    def _attachment(path: str, title: str, mime: str) -> ToolResult:
        with open(path, "rb") as handle:
            data = base64.b64encode(handle.read()).decode()
        message = f"{'PDF' if mime == 'application/pdf' else 'Image'} read successfully"
        return ToolResult(output=message, title=title,
                          metadata={"preview": message, "truncated": False, "loaded": [], "filepath": path},
                          attachments=[{"type": "file", "mime": mime, "url": f"data:{mime};base64,{data}"}])
