"""invalid: what the runner substitutes for a call to an unknown tool or with malformed arguments."""
from __future__ import annotations

from sessions_app.runtime.tools.base import Tool, ToolContext, ToolResult, schema


class InvalidTool(Tool):
    id = "invalid"
    description = "Do not use"
    parameters = schema({"tool": {"type": "string"}, "error": {"type": "string"}}, ["tool", "error"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        error = args.get("error") if isinstance(args.get("error"), str) else "unknown error"
        return ToolResult(output=f"The arguments provided to the tool are invalid: {error}", title="Invalid Tool",
                          metadata={})
