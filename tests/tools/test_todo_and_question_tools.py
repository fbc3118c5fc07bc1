import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from sessions_app.models import Question, Todo
from sessions_app.runtime.tools.base import PermissionRejected
from sessions_app.services.questions import question_reject, question_reply
from tests.tools.harness import run_tool, wait_for_request

QUESTIONS = [{"question": "Which color?", "header": "Color",
              "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]


async def test_todowrite_replaces_the_session_list(ws):
    todos = [{"content": "a", "status": "pending", "priority": "high"},
             {"content": "b", "status": "completed", "priority": "low"}]
    result = await run_tool(ws, "todowrite", {"todos": todos})
    assert json.loads(result.output) == todos
    assert result.title == "1 todos"
    rows = await sync_to_async(lambda: list(Todo.objects.filter(session=ws.session).order_by("position")
                                            .values_list("content", flat=True)), thread_sensitive=False)()
    assert rows == ["a", "b"]
    read = await run_tool(ws, "todoread", {})
    assert json.loads(read.output) == todos


async def test_question_waits_for_the_answer(ws):
    task = asyncio.ensure_future(run_tool(ws, "question", {"questions": QUESTIONS}))
    question = await wait_for_request(Question, ws.session)
    assert question.questions == QUESTIONS
    await sync_to_async(question_reply, thread_sensitive=False)(user=ws.user, request_id=question.id,
                                                                answers=[["Blue"]])
    result = await asyncio.wait_for(task, 10)
    assert result.output == ('User has answered your questions: "Which color?"="Blue". You can now continue with '
                             "the user's answers in mind.")
    assert result.title == "Asked 1 question"
    assert result.metadata["answers"] == [["Blue"]]


async def test_a_dismissed_question_halts_the_loop(ws):
    task = asyncio.ensure_future(run_tool(ws, "question", {"questions": QUESTIONS}))
    question = await wait_for_request(Question, ws.session)
    await sync_to_async(question_reject, thread_sensitive=False)(user=ws.user, request_id=question.id)
    with pytest.raises(PermissionRejected, match="^The user dismissed this question$") as caught:
        await asyncio.wait_for(task, 10)
    assert caught.value.halts
