"""Questions the agent asks the user (the `question` tool, reference §3.10/§5.6). Like permissions, a
question is a row: the tool polls it, so a reply on any worker unblocks it."""
from __future__ import annotations

import asyncio

from asgiref.sync import sync_to_async
from django.db import transaction

from agentserver import ids
from agentserver.errors import BadRequest, NotFound
from sessions_app.models import Question, Session
from sessions_app.runtime.tools.base import QuestionRejected
from sessions_app.services.messages import publish_for

DISMISSED_TEXT = "The user dismissed this question"
POLL_SECONDS = 0.1


def question_wire(question: Question) -> dict:
    out = {"id": question.id, "sessionID": question.session_id, "questions": question.questions}
    if question.tool:
        out["tool"] = question.tool
    return out


def question_list(*, user, project_id: str | None = None) -> list[dict]:
    rows = Question.objects.filter(session__owner=user, status="pending").order_by("id")
    if project_id is not None:
        rows = rows.filter(session__project_id=project_id)
    return [question_wire(q) for q in rows]


def _pending_for(user, request_id: str) -> Question:
    question = (Question.objects.select_for_update().select_related("session")
                .filter(id=request_id, session__owner=user, status="pending").first())
    if question is None:
        raise NotFound(f"Question request not found: {request_id}", requestID=request_id)
    return question


def _validate_answers(answers) -> list[list[str]]:
    if not isinstance(answers, list) or not all(
            isinstance(a, list) and all(isinstance(x, str) for x in a) for a in answers):
        raise BadRequest("answers: expected an array of arrays of strings", kind="Body",
                         issues=[{"path": ["answers"], "message": "expected string[][]"}])
    return answers


def question_reply(*, user, request_id: str, answers) -> bool:
    answers = _validate_answers(answers)
    with transaction.atomic():
        question = _pending_for(user, request_id)
        question.status = "replied"
        question.answers = answers
        question.save(update_fields=["status", "answers"])
        publish_for(question.session, "question.replied",
                    {"sessionID": question.session_id, "requestID": question.id, "answers": answers})
    if question.tool:
        from sessions_app.runtime.resume import wake_if_orphaned

        wake_if_orphaned(question.session_id)  # a call interrupted by a restart resumes (runtime/resume.py)
    return True


def _reject(question: Question) -> None:
    question.status = "rejected"
    question.save(update_fields=["status"])
    publish_for(question.session, "question.rejected", {"sessionID": question.session_id, "requestID": question.id})


def question_reject(*, user, request_id: str) -> bool:
    with transaction.atomic():
        _reject(_pending_for(user, request_id))
    return True


def reject_pending_questions(*, session: Session) -> int:
    with transaction.atomic():
        rows = list(Question.objects.select_for_update().select_related("session")
                    .filter(session=session, status="pending").order_by("id"))
        for row in rows:
            _reject(row)
    return len(rows)


def _create_or_reuse(session: Session, questions: list[dict], tool_ref: dict | None) -> Question:
    if tool_ref and tool_ref.get("callID"):
        for row in Question.objects.filter(session=session).order_by("-id")[:20]:
            if (row.tool or {}).get("callID") == tool_ref["callID"]:
                return row
    with transaction.atomic():
        question = Question.objects.create(id=ids.ascending("que"), session=session, questions=questions,
                                           tool=tool_ref or None)
        publish_for(session, "question.asked", question_wire(question))
    return question


def _state(question_id: str) -> tuple[str, list | None]:
    row = Question.objects.filter(id=question_id).values_list("status", "answers").first()
    return row if row else ("rejected", None)


def _mark_used(question_id: str) -> None:
    Question.objects.filter(id=question_id, status="replied").update(status="used")


def _reject_id(question_id: str) -> None:
    with transaction.atomic():
        row = Question.objects.select_for_update().select_related("session").filter(
            id=question_id, status="pending").first()
        if row is not None:
            _reject(row)


async def ask_question(*, session: Session, questions: list[dict], tool_ref: dict | None = None,
                       abort: asyncio.Event | None = None) -> list[list[str]]:
    """Block until the user answers (→ answers, one list of labels per question) or dismisses
    (→ QuestionRejected, which halts the loop)."""
    question = await sync_to_async(_create_or_reuse, thread_sensitive=False)(session, questions, tool_ref)
    state = sync_to_async(_state, thread_sensitive=False)
    while True:
        status, answers = await state(question.id)
        if status in ("replied", "used"):
            if status == "replied":  # read by the waiting tool: a restart must not re-run it
                await sync_to_async(_mark_used, thread_sensitive=False)(question.id)
            return answers or []
        if status != "pending":
            raise QuestionRejected(DISMISSED_TEXT)
        if abort is not None and abort.is_set():
            await sync_to_async(_reject_id, thread_sensitive=False)(question.id)
            raise QuestionRejected(DISMISSED_TEXT)
        if abort is not None:
            try:
                await asyncio.wait_for(abort.wait(), POLL_SECONDS)
            except asyncio.TimeoutError:
                pass
        else:
            await asyncio.sleep(POLL_SECONDS)
