"""task: run a subagent in a child session (the runner's `ctx.run_child`) and return its final text."""
from __future__ import annotations

from sessions_app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult, require_str, schema

DESCRIPTION = """Launch a new agent to handle complex, multistep tasks autonomously.

Available agent types and the tools they have access to:
{agents}

When using the Task tool, you must specify a subagent_type parameter to select which agent type to use.

When NOT to use the Task tool:
- If you want to read a specific file path, use the Read or Glob tool instead, to find the match more quickly
- If you are searching for a specific class definition like "class Foo", use the Glob tool instead
- If you are searching for code within a specific file or set of 2-3 files, use the Read tool instead

Usage notes:
1. Launch multiple agents concurrently whenever possible, to maximize performance; to do that, use a single message with multiple tool uses
2. When the agent is done, it will return a single message back to you. The result returned by the agent is not visible to the user. To show the user the result, you should send a text message back to the user with a concise summary of the result.
3. Each agent invocation starts with a fresh context unless you provide task_id to resume the same subagent session. Your prompt should contain a highly detailed task description for the agent to perform autonomously, and you should specify exactly what information the agent should return back to you in its final message.
4. The agent's outputs should generally be trusted
5. Clearly tell the agent whether you expect it to write code or just to do research (search, file reads, web fetches, etc.), since it is not aware of the user's intent"""


def describe(agents: list[dict]) -> str:
    lines = [f"- {a['name']}: {a.get('description') or 'This subagent should only be called manually by the user.'}"
             for a in agents if a.get("mode") != "primary" and not a.get("hidden")]
    return DESCRIPTION.replace("{agents}", "\n".join(lines))


class TaskTool(Tool):
    id = "task"
    parameters = schema({
        "description": {"type": "string", "description": "A short (3-5 words) description of the task"},
        "prompt": {"type": "string", "description": "The task for the agent to perform"},
        "subagent_type": {"type": "string", "description": "The type of specialized agent to use for this task"},
        "task_id": {"type": "string", "description": (
            "This should only be set if you mean to resume a previous task (you can pass a prior task_id and the "
            "task will continue the same subagent session as before instead of creating a fresh one)")},
        "command": {"type": "string", "description": "The command that triggered this task"},
    }, ["description", "prompt", "subagent_type"])

    def __init__(self, agents: list[dict] | None = None):
        self.description = describe(agents or [])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        description = require_str(args, "description")
        prompt = require_str(args, "prompt")
        agent = require_str(args, "subagent_type")
        from sessions_app.runtime.agents import _agents

        known = _agents(await ctx.get_config())
        if agent not in known:
            raise ToolError(f"Unknown agent type: {agent} is not a valid agent type")
        await ctx.ask("task", [agent], metadata={"description": description, "subagent_type": agent}, always=["*"])
        if ctx.run_child is None:
            raise ToolError("Subagents are not available in this context")
        await ctx.update(title=description, metadata={})
        kwargs = {"agent": agent, "prompt": prompt, "description": description}
        if isinstance(args.get("task_id"), str) and args["task_id"].startswith("ses"):
            kwargs["task_id"] = args["task_id"]
        child_id, text = await ctx.run_child(**kwargs)
        output = f'<task id="{child_id}" state="completed">\n<task_result>\n{text}\n</task_result>\n</task>'
        return ToolResult(output=output, title=description, metadata={"sessionId": child_id, "summary": []})
