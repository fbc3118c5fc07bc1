"""glob: files matching a glob pattern, newest first, at most 100."""
from __future__ import annotations

import os

from agentserver import ripgrep
from sessions_app.runtime.tools.base import (Tool, ToolContext, ToolError, ToolResult, confine, relative_title,
                                             require_str, schema)
from sessions_app.runtime.tools.search import mtime, rg

LIMIT = 100

DESCRIPTION = """- Fast file pattern matching tool that works with any codebase size
- Supports glob patterns like "**/*.js" or "src/**/*.ts"
- Returns matching file paths sorted by modification time
- Use this tool when you need to find files by name patterns
- When you are doing an open ended search that may require multiple rounds of globbing and grepping, use the Task tool instead
- You have the capability to call multiple tools in a single response. It is always better to speculatively perform multiple searches as a batch that are potentially useful."""


class GlobTool(Tool):
    id = "glob"
    description = DESCRIPTION
    parameters = schema({
        "pattern": {"type": "string", "description": "The glob pattern to match files against"},
        "path": {"type": "string", "description": (
            'The directory to search in. If not specified, the current working directory will be used. '
            'IMPORTANT: Omit this field to use the default directory. DO NOT enter "undefined" or "null" - simply '
            'omit it for the default behavior. Must be a valid directory path if provided.')},
    }, ["pattern"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        pattern = require_str(args, "pattern")
        await ctx.ask("glob", [pattern], metadata={"pattern": pattern, "path": args.get("path")}, always=["*"])
        search = await confine(ctx, args.get("path") or ctx.context.directory, kind="directory")
        if not os.path.isdir(search):
            raise ToolError(f"Directory not found: {search}")
        masked = ripgrep.masked_prefixes(search)  # the server's own directories: never found (their globs last)
        _, out = await rg(["--files", "--hidden", "--glob", "!.git/*", "--glob", pattern,
                           *ripgrep.exclusions(search)], cwd=search, user=ctx.context.user, abort=ctx.abort)
        files = [os.path.join(search, line) for line in out.splitlines()
                 if line and not ripgrep.is_masked(line, masked)]
        files.sort(key=mtime, reverse=True)
        truncated = len(files) > LIMIT
        files = files[:LIMIT]
        if not files:
            output = "No files found"
        else:
            output = "\n".join(files)
            if truncated:
                output += ("\n\n(Results are truncated: showing first 100 results. Consider using a more specific "
                           "path or pattern.)")
        return ToolResult(output=output, title=relative_title(ctx, search),
                          metadata={"count": len(files), "truncated": truncated})
