"""question: ask the user one or more multiple-choice questions and wait for the answers."""
from __future__ import annotations

from agentserver.workers.loop import free_db
from sessions_app.runtime.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    schema,
)

DESCRIPTION = """Use this tool when you need to ask the user questions during execution. This allows you to:
1. Gather user preferences or requirements
2. Clarify ambiguous instructions
3. Get decisions on implementation choices as you work
4. Offer choices to the user about what direction to take.

Usage notes:
- When `custom` is enabled (default), a "Type your own answer" option is added automatically; don't include "Other" or catch-all options
- Answers are returned as arrays of labels; set `multiple: true` to allow selecting more than one
- If you recommend a specific option, make that the first option in the list and add "(Recommended)" at the end of the label"""

OPTION = {"type": "object", "properties": {
    "label": {"type": "string", "description": "Display text (1-5 words, concise)"},
    "description": {"type": "string", "description": "Explanation of choice"},
}, "required": ["label", "description"]}
QUESTION = {"type": "object", "properties": {
    "question": {"type": "string", "description": "Complete question"},
    "header": {"type": "string", "description": "Very short label (max 30 chars)"},
    "options": {"type": "array", "items": OPTION, "description": "Available choices"},
    "multiple": {"type": "boolean", "description": "Allow selecting multiple choices"},
}, "required": ["question", "header", "options"]}


def _valid(questions) -> list[dict]:
    if not isinstance(questions, list) or not questions:
        raise ToolError("Invalid arguments: 'questions' must be a non-empty array")
    out = []
    for q in questions:
        if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not isinstance(q.get("options"), list):
            raise ToolError("Invalid arguments: each question needs 'question', 'header' and 'options'")
        options = [{"label": str(o.get("label", "")), "description": str(o.get("description", ""))}
                   for o in q["options"] if isinstance(o, dict)]
        item = {"question": q["question"], "header": str(q.get("header", ""))[:30], "options": options}
        if isinstance(q.get("multiple"), bool):
            item["multiple"] = q["multiple"]
        out.append(item)
    return out


def _session(session_id: str):
    from sessions_app.store.sessions import session_by_id

    return session_by_id(session_id)


class QuestionTool(Tool):
    id = "question"
    description = DESCRIPTION
    parameters = schema({"questions": {"type": "array", "items": QUESTION, "description": "Questions to ask"}},
                        ["questions"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        from sessions_app.runtime.asking import ask_question

        questions = _valid(args.get("questions"))
        session = await free_db(_session)(ctx.session_id)
        answers = await ask_question(session=session, questions=questions,
                                     tool_ref={"messageID": ctx.message_id, "callID": ctx.call_id}, abort=ctx.abort)

        def shown(index: int) -> str:
            answer = answers[index] if index < len(answers) else None
            return ", ".join(answer) if answer else "Unanswered"

        formatted = ", ".join(f'"{q["question"]}"="{shown(i)}"' for i, q in enumerate(questions))
        count = len(questions)
        return ToolResult(
            output=f"User has answered your questions: {formatted}. You can now continue with the user's answers in mind.",
            title=f"Asked {count} question{'s' if count > 1 else ''}",
            metadata={"sessionID": ctx.session_id, "callID": ctx.call_id, "answers": answers})
