import pytest

from sessions_app.runtime.tool_registry import get_tool
from sessions_app.runtime.tools.base import ToolError
from tests.tools.harness import run_tool


async def test_task_runs_the_subagent_through_the_runners_child_hook(ws):
    calls = []

    async def run_child(**kwargs):
        calls.append(kwargs)
        return "ses_child", "found 3 files"

    ctx = ws.tool_context()
    ctx.run_child = run_child
    tool = get_tool("task", config={})
    result = await tool.run({"description": "find files", "prompt": "look", "subagent_type": "explore"}, ctx)
    assert calls == [{"agent": "explore", "prompt": "look", "description": "find files"}]
    assert result.output == ('<task id="ses_child" state="completed">\n<task_result>\nfound 3 files\n'
                             "</task_result>\n</task>")
    assert result.metadata["sessionId"] == "ses_child"
    assert "- explore: Fast agent" in tool.description and "- build" not in tool.description


async def test_task_refuses_an_unknown_agent(ws):
    with pytest.raises(ToolError, match="Unknown agent type: nope"):
        await run_tool(ws, "task", {"description": "d", "prompt": "p", "subagent_type": "nope"})


async def test_skill_lists_and_loads_project_skills(ws):
    skill = ws.repo / ".opencode/skill/release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release\n---\nStep 1: tag it.\n")
    tool = get_tool("skill", context=ws.context)
    assert "<name>release</name>" in tool.description and "Cut a release" in tool.description
    result = await run_tool(ws, "skill", {"name": "release"})
    assert result.output == f"## Skill: release\n\n**Base directory**: {skill}\n\nStep 1: tag it."
    with pytest.raises(ToolError, match='Skill "other" not found'):
        await run_tool(ws, "skill", {"name": "other"})
