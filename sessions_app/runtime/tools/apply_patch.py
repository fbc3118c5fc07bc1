"""apply_patch: opencode's (codex's) patch envelope — Add / Update (with @@ hunks, optional Move to) /
Delete File — applied atomically after one `edit` permission for all files it touches."""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

from projects_app.edit_feedback import after_edit
from sessions_app.runtime.tools import diffs
from sessions_app.runtime.tools.base import (Tool, ToolContext, ToolError, ToolResult, confine, publish,
                                             relative_title, require_str, schema)
from sessions_app.runtime.tools.write import read_text, write_text

DESCRIPTION = """Use the `apply_patch` tool to edit files. Your patch language is a stripped-down, file-oriented diff format designed to be easy to parse and safe to apply. You can think of it as a high-level envelope:

*** Begin Patch
[ one or more file sections ]
*** End Patch

Within that envelope, you get a sequence of file operations.
You MUST include a header to specify the action you are taking.
Each operation starts with one of three headers:

*** Add File: <path> - create a new file. Every following line is a + line (the initial contents).
*** Delete File: <path> - remove an existing file. Nothing follows.
*** Update File: <path> - patch an existing file in place (optionally with a rename).

Example patch:

```
*** Begin Patch
*** Add File: hello.txt
+Hello world
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-print("Hi")
+print("Hello, world!")
*** Delete File: obsolete.txt
*** End Patch
```

It is important to remember:
- You must include a header with your intended action (Add/Delete/Update)
- You must prefix new lines with `+` even when creating a new file
- Context lines start with a space, removed lines with `-`
- File references can only be relative, NEVER ABSOLUTE."""


@dataclass
class Chunk:
    anchor: str | None
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    end_of_file: bool = False


@dataclass
class FileOp:
    kind: str  # add | delete | update
    path: str
    move_to: str | None = None
    content: str = ""
    chunks: list[Chunk] = field(default_factory=list)


def parse(text: str) -> list[FileOp]:
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != "*** Begin Patch":
        raise ToolError("apply_patch verification failed: The first line of the patch must be '*** Begin Patch'")
    if lines[-1].strip() != "*** End Patch":
        raise ToolError("apply_patch verification failed: The last line of the patch must be '*** End Patch'")
    ops: list[FileOp] = []
    body = lines[1:-1]
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith("*** Add File: "):
            op = FileOp("add", line[len("*** Add File: "):].strip())
            i += 1
            added = []
            while i < len(body) and not body[i].startswith("*** "):
                if not body[i].startswith("+"):
                    raise ToolError(f"apply_patch verification failed: Invalid Add File line: {body[i]!r}")
                added.append(body[i][1:])
                i += 1
            op.content = "\n".join(added) + ("\n" if added else "")
            ops.append(op)
        elif line.startswith("*** Delete File: "):
            ops.append(FileOp("delete", line[len("*** Delete File: "):].strip()))
            i += 1
        elif line.startswith("*** Update File: "):
            op = FileOp("update", line[len("*** Update File: "):].strip())
            i += 1
            if i < len(body) and body[i].startswith("*** Move to: "):
                op.move_to = body[i][len("*** Move to: "):].strip()
                i += 1
            chunk: Chunk | None = None
            while i < len(body) and not (body[i].startswith("*** ") and body[i].strip() != "*** End of File"):
                current = body[i]
                if current.startswith("@@"):
                    chunk = Chunk(anchor=current[2:].strip() or None)
                    op.chunks.append(chunk)
                elif current.strip() == "*** End of File":
                    if chunk is not None:
                        chunk.end_of_file = True
                else:
                    if chunk is None:
                        chunk = Chunk(anchor=None)
                        op.chunks.append(chunk)
                    marker, rest = (current[:1], current[1:]) if current else (" ", "")
                    if marker == " ":
                        chunk.old.append(rest)
                        chunk.new.append(rest)
                    elif marker == "-":
                        chunk.old.append(rest)
                    elif marker == "+":
                        chunk.new.append(rest)
                    else:
                        raise ToolError(f"apply_patch verification failed: Invalid hunk line: {current!r}")
                i += 1
            if not op.chunks:
                raise ToolError(f"apply_patch verification failed: Update File {op.path} has no hunks")
            ops.append(op)
        elif not line.strip():
            i += 1
        else:
            raise ToolError(f"apply_patch verification failed: Unexpected line in patch: {line!r}")
    if not ops:
        raise ToolError("apply_patch verification failed: no file operations in patch")
    return ops


def _seek(lines: list[str], wanted: list[str], start: int, end_of_file: bool) -> int:
    if not wanted:
        return len(lines)
    for normalize in (lambda s: s, str.rstrip, str.strip):
        target = [normalize(w) for w in wanted]
        positions = range(len(lines) - len(wanted), start - 1, -1) if end_of_file else \
            range(start, len(lines) - len(wanted) + 1)
        for pos in positions:
            if [normalize(x) for x in lines[pos:pos + len(wanted)]] == target:
                return pos
    return -1


def apply_chunks(path: str, content: str, chunks: list[Chunk]) -> str:
    trailing_newline = content.endswith("\n")
    lines = content.split("\n")
    if trailing_newline:
        lines = lines[:-1]
    cursor = 0
    for chunk in chunks:
        if chunk.anchor:
            found = _seek(lines, [chunk.anchor], cursor, False)
            if found < 0:
                raise ToolError(f"apply_patch verification failed: Failed to find context '{chunk.anchor}' in {path}")
            cursor = found + 1
        pos = _seek(lines, chunk.old, cursor, chunk.end_of_file)
        if pos < 0:
            raise ToolError("apply_patch verification failed: Failed to find expected lines in "
                            f"{path}:\n" + "\n".join(chunk.old))
        lines[pos:pos + len(chunk.old)] = chunk.new
        cursor = pos + len(chunk.new)
    return "\n".join(lines) + ("\n" if trailing_newline else "")


class ApplyPatchTool(Tool):
    id = "apply_patch"
    description = DESCRIPTION
    parameters = schema({"patchText": {"type": "string", "description": (
        "The full patch text that describes all changes to be made")}}, ["patchText"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        ops = parse(require_str(args, "patchText"))
        planned: list[tuple[str, str, str | None, str, str]] = []  # (letter, path, move target, before, after)
        for op in ops:
            path = await confine(ctx, op.path)
            if op.kind == "add":
                before = await asyncio.to_thread(read_text, path) if os.path.isfile(path) else ""
                planned.append(("A", path, None, before, op.content))
                continue
            if not os.path.isfile(path):
                raise ToolError(f"apply_patch verification failed: Failed to read file to "
                                f"{'delete' if op.kind == 'delete' else 'update'}: {path}")
            before = await asyncio.to_thread(read_text, path)
            if op.kind == "delete":
                planned.append(("D", path, None, before, ""))
                continue
            after = apply_chunks(path, before, op.chunks)
            target = await confine(ctx, op.move_to) if op.move_to else None
            planned.append(("M", path, target, before, after))
        diff = "\n".join(diffs.unified(target or path, before, after) for _, path, target, before, after in planned)
        titles = [relative_title(ctx, target or path) for _, path, target, _, _ in planned]
        await ctx.ask("edit", titles, metadata={"diff": diff, "files": [p for _, p, _, _, _ in planned]},
                      always=["*"])
        summary, files = [], []
        for letter, path, target, _, after in planned:
            if letter == "D":
                await asyncio.to_thread(os.remove, path)
            else:
                await asyncio.to_thread(write_text, target or path, after)
                if target and target != path:
                    await asyncio.to_thread(os.remove, path)
            final = target or path
            files.append(final)
            summary.append(f"{letter} {relative_title(ctx, final)}")
            await publish(ctx, "file.edited", {"file": final})
        written = [file for file, (letter, *_) in zip(files, planned) if letter != "D"]
        checked = await after_edit(context=ctx.context, config=await ctx.get_config(), files=written)
        return ToolResult(output="Success. Updated the following files:\n" + "\n".join(summary) + checked.output,
                          title=", ".join(titles),
                          metadata={"diff": diff, "files": files, "diagnostics": checked.diagnostics})
