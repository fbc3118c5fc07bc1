"""An MCP server's tool as one of the agent's tools: id `<server>_<tool>` (opencode's naming, both parts
sanitized), the server's input schema, permission asked under the tool id, text content as the output.
The adapter belongs to the agent, not to providers_app: the agent builds on the MCP client, never the reverse."""
from __future__ import annotations

import json

from providers_app.mcp import client, configs, registry
from sessions_app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult, truncate


def tool_id(server: str, tool: str) -> str:
    return f"{configs.sanitize(server)}_{configs.sanitize(tool)}"


def _schema(input_schema: dict | None) -> dict:
    # As opencode: the server's schema, always an object with properties, no extra keys.
    schema = dict(input_schema or {})
    schema.update(type="object", properties=schema.get("properties") or {}, additionalProperties=False)
    return schema


def _output(result) -> str:
    texts = []
    for content in result.content or []:
        kind = getattr(content, "type", None)
        if kind == "text":
            texts.append(content.text)
        elif kind == "resource" and getattr(content.resource, "text", None):
            texts.append(content.resource.text)
        elif kind in ("image", "audio"):
            texts.append(f"[{kind} content: {getattr(content, 'mime_type', '')}]")
    if not texts and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content))
    return "\n\n".join(texts)


class McpTool(Tool):
    def __init__(self, target: client.Target, tool):
        self.target = target
        self.tool_name = tool.name
        self.id = tool_id(target.name, tool.name)
        self.description = tool.description or ""
        self.parameters = _schema(tool.input_schema)

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        await ctx.ask(self.id, ["*"], metadata={}, always=["*"])
        name = self.tool_name
        try:
            result = await client.request(self.target, lambda s: s.call_tool(name, args or {}),
                                          timeout=self.target.timeout(client.TOOL_CALL_SECONDS))
        except client.McpFailure as failure:
            raise ToolError(f"MCP server {self.target.name}: {failure}") from None
        output, truncated = truncate(_output(result))
        if result.is_error:
            raise ToolError(output or f"MCP tool {name} failed")
        return ToolResult(output=output, title="", metadata={"truncated": truncated})


def tools_for(context, config: dict | None = None) -> list[Tool]:
    """The agent's MCP tools in this context: `<server>_<tool>` for every tool of every connected server."""
    return [McpTool(target, tool) for target, tool in registry.connected_tools(context, config)]
