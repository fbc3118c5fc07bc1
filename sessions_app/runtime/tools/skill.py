"""skill: load a SKILL.md (from .opencode/skill(s)/<name>/ or .claude/skills/<name>/ in the project)."""
from __future__ import annotations

import os

from sessions_app.runtime.frontmatter import parse_frontmatter
from sessions_app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult, require_str, schema

SKILL_DIRS = (".opencode/skill", ".opencode/skills", ".claude/skills")
MAX_SKILL_BYTES = 256 * 1024


def discover(context) -> dict[str, dict]:
    """name → {name, description, location, content}; nearer directories (from `directory` up to the
    worktree) win over farther ones."""
    if context is None:
        return {}
    from agentserver import paths

    found: dict[str, dict] = {}
    for base in context.directories_up():
        for sub in SKILL_DIRS:
            root = os.path.join(base, sub)
            if not os.path.isdir(root):
                continue
            for name in sorted(os.listdir(root)):
                file = os.path.join(root, name, "SKILL.md")
                real = os.path.realpath(file)
                if name in found or not os.path.isfile(real) or not paths.within_any(real, [context.boundary]):
                    continue
                if os.path.getsize(real) > MAX_SKILL_BYTES:
                    continue
                with open(real, encoding="utf-8", errors="replace") as handle:
                    meta, body = parse_frontmatter(handle.read())
                skill_name = meta.get("name") or name
                found.setdefault(skill_name, {"name": skill_name, "description": meta.get("description", ""),
                                              "location": real, "content": body})
    return found


class SkillTool(Tool):
    id = "skill"
    parameters = schema({"name": {"type": "string", "description": (
        "The skill identifier from available_skills (e.g., 'code-review' or 'category/helper')")}}, ["name"])

    def __init__(self, context=None):
        try:
            self.skills = discover(context)
        except OSError:
            self.skills = {}
        listing = "\n".join(
            f"  <skill>\n    <name>{s['name']}</name>\n    <description>{s['description']}</description>\n  </skill>"
            for s in self.skills.values())
        if self.skills:
            self.description = (
                "Load a skill to get detailed instructions for a specific task. Skills provide specialized knowledge "
                "and step-by-step guidance. Use this when a task matches an available skill's description.\n"
                f"<available_skills>\n{listing}\n</available_skills>")
        else:
            self.description = ("Load a skill to get detailed instructions for a specific task. "
                                "No skills are currently available.")

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        name = require_str(args, "name")
        skills = self.skills or discover(ctx.context)
        skill = skills.get(name)
        if skill is None:
            available = ", ".join(sorted(skills)) or "none"
            raise ToolError(f'Skill "{name}" not found. Available skills: {available}')
        await ctx.ask("skill", [name], metadata={}, always=[name])
        base = os.path.dirname(skill["location"])
        output = f"## Skill: {skill['name']}\n\n**Base directory**: {base}\n\n{skill['content'].strip()}"
        return ToolResult(output=output, title=f"Loaded skill: {skill['name']}",
                          metadata={"name": skill["name"], "dir": base})
