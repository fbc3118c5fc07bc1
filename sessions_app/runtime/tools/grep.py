"""grep: a regex search over file contents with ripgrep; files newest first, at most 100 matches."""
from __future__ import annotations

from agentserver import paths
from sessions_app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult, confine, require_str, schema
from sessions_app.runtime.tools.search import mtime, rg

LIMIT = 100
MAX_LINE = 2000

DESCRIPTION = """- Fast content search tool that works with any codebase size
- Searches file contents using regular expressions
- Supports full regex syntax (eg. "log.*Error", "function\\s+\\w+", etc.)
- Filter files by pattern with the include parameter (eg. "*.js", "*.{ts,tsx}")
- Returns file paths and line numbers with at least one match sorted by modification time
- Use this tool when you need to find files containing specific patterns
- If you need to identify/count the number of matches within files, use the Bash tool with `rg` (ripgrep) directly. Do NOT use `grep`.
- When you are doing an open-ended search that may require multiple rounds of globbing and grepping, use the Task tool instead"""


class GrepTool(Tool):
    id = "grep"
    description = DESCRIPTION
    parameters = schema({
        "pattern": {"type": "string", "description": "The regex pattern to search for in file contents"},
        "path": {"type": "string",
                 "description": "The directory to search in. Defaults to the current working directory."},
        "include": {"type": "string",
                    "description": 'File pattern to include in the search (e.g. "*.js", "*.{ts,tsx}")'},
    }, ["pattern"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        pattern = require_str(args, "pattern")
        include = args.get("include") if isinstance(args.get("include"), str) and args.get("include") else None
        await ctx.ask("grep", [pattern], metadata={"pattern": pattern, "path": args.get("path"), "include": include},
                      always=["*"])
        search = await confine(ctx, args.get("path") or ctx.context.directory, kind="directory")
        rg_args = ["-nH", "--hidden", "--no-messages", "--field-match-separator=|", "--glob", "!.git/*",
                   "--regexp", pattern]
        if include:
            rg_args += ["--glob", include]
        code, out = await rg(rg_args + [search], cwd=ctx.context.directory, user=ctx.context.user,
                             abort=ctx.abort)
        if code == 2 and not out:
            raise ToolError(f"ripgrep failed: invalid pattern or path: {pattern}")
        matches = []
        for line in out.splitlines():
            path, sep, rest = line.partition("|")
            number, sep2, text = rest.partition("|")
            if not sep or not sep2 or not number.isdigit():
                continue
            if paths.masked(path, search):
                continue  # inside the server's own directories
            matches.append((path, int(number), text))
        if not matches:
            return ToolResult(output="No files found", title=pattern, metadata={"matches": 0, "truncated": False})
        times = {path: mtime(path) for path in {m[0] for m in matches}}
        matches.sort(key=lambda m: (-times[m[0]], m[0], m[1]))
        truncated = len(matches) > LIMIT
        shown = matches[:LIMIT]
        lines = [f"Found {len(matches)} matches" + (f" (showing first {LIMIT})" if truncated else "")]
        current = None
        for path, number, text in shown:
            if path != current:
                if current is not None:
                    lines.append("")
                current = path
                lines.append(f"{path}:")
            if len(text) > MAX_LINE:
                text = text[:MAX_LINE] + "..."
            lines.append(f"  Line {number}: {text}")
        if truncated:
            lines += ["", f"(Results truncated: showing {LIMIT} of {len(matches)} matches. "
                          "Consider using a more specific path or pattern.)"]
        return ToolResult(output="\n".join(lines), title=pattern,
                          metadata={"matches": len(matches), "truncated": truncated})
