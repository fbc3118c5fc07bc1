"""list: a directory tree (a tool older opencode offered; kept runnable by name), ignoring the usual build and dependency folders."""
from __future__ import annotations

import os

from agentserver import ripgrep
from sessions_app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult, confine, relative_title, schema
from sessions_app.runtime.tools.search import rg

LIMIT = 100
IGNORE = ["node_modules/", "__pycache__/", ".git/", "dist/", "build/", "target/", "vendor/", "bin/", "obj/",
          ".idea/", ".vscode/", ".zig-cache/", "zig-out", ".coverage", "coverage/", "tmp/", "temp/", ".cache/",
          "cache/", "logs/", ".venv/", "venv/", "env/"]

DESCRIPTION = ("Lists files and directories in a given path. The path parameter must be absolute; omit it to use "
               "the current workspace directory. You can optionally provide an array of glob patterns to ignore "
               "with the ignore parameter. You should generally prefer the Glob and Grep tools, if you know which "
               "directories to search.")


class ListTool(Tool):
    id = "list"
    description = DESCRIPTION
    parameters = schema({
        "path": {"type": "string",
                 "description": "The absolute path to the directory to list (must be absolute, not relative)"},
        "ignore": {"type": "array", "items": {"type": "string"}, "description": "List of glob patterns to ignore"},
    }, [])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        search = await confine(ctx, args.get("path") or ctx.context.directory, kind="directory")
        await ctx.ask("list", [search], metadata={"path": search}, always=["*"])
        if not os.path.isdir(search):
            raise ToolError(f"Directory not found: {search}")
        ignore = [f"!{p}*" for p in IGNORE]
        ignore += [f"!{p}" for p in (args.get("ignore") or []) if isinstance(p, str)]
        rg_args = ["--files", "--hidden"]
        for pattern in ignore:
            rg_args += ["--glob", pattern]
        masked = ripgrep.masked_prefixes(search)  # the server's own directories: never listed
        _, out = await rg(rg_args + ripgrep.exclusions(search), cwd=search, user=ctx.context.user, abort=ctx.abort)
        files = sorted(line for line in out.splitlines() if line and not ripgrep.is_masked(line, masked))[:LIMIT]
        dirs: set[str] = {"."}
        by_dir: dict[str, list[str]] = {}
        for file in files:
            parent = os.path.dirname(file) or "."
            parts = parent.split("/") if parent != "." else []
            for i in range(len(parts)):
                dirs.add("/".join(parts[: i + 1]))
            by_dir.setdefault(parent, []).append(os.path.basename(file))

        def render(directory: str, depth: int) -> str:
            out = ""
            if depth > 0:
                out += "  " * depth + os.path.basename(directory) + "/\n"
            children = sorted(d for d in dirs if d != directory and (os.path.dirname(d) or ".") == directory)
            for child in children:
                out += render(child, depth + 1)
            for name in sorted(by_dir.get(directory, [])):
                out += "  " * (depth + 1) + name + "\n"
            return out

        output = f"{search}/\n" + render(".", 0)
        return ToolResult(output=output, title=relative_title(ctx, search),
                          metadata={"count": len(files), "truncated": len(files) >= LIMIT})
