"""Questions the agent asks the user (the `question` tool, reference §3.10/§5.6), the user's side: list, reply,
reject. The tool asks and waits through runtime/asking.py (re-exported here for callers of this service)."""
from __future__ import annotations

from django.db import transaction

from agentserver.errors import BadRequest, NotFound
from sessions_app.models import Question, Session
from sessions_app.runtime.asking import DISMISSED_TEXT, ask_question, question_wire, reject_question  # noqa: F401
from sessions_app.store.messages import publish_for


def question_list(*, user, project_id: str | None = None, session: Session | None = None) -> list[dict]:
    rows = Question.objects.filter(session__owner=user, status="pending").order_by("id")
    if project_id is not None:
        rows = rows.filter(session__project_id=project_id)
    if session is not None:
        rows = rows.filter(session=session)
    return [question_wire(q) for q in rows]


def _pending_for(user, request_id: str, session_id: str | None = None) -> Question:
    """The caller's pending question; with `session_id`, only that session's (the v2 per-session routes)."""
    rows = Question.objects.filter(id=request_id, session__owner=user, status="pending")
    if session_id is not None:
        rows = rows.filter(session_id=session_id)
    question = rows.select_for_update().select_related("session").first()
    if question is None:
        raise NotFound(f"Question request not found: {request_id}", requestID=request_id)
    return question


def _validate_answers(answers) -> list[list[str]]:
    if not isinstance(answers, list) or not all(
            isinstance(a, list) and all(isinstance(x, str) for x in a) for a in answers):
        raise BadRequest("answers: expected an array of arrays of strings", kind="Body",
                         issues=[{"path": ["answers"], "message": "expected string[][]"}])
    return answers


def question_reply(*, user, request_id: str, answers, session_id: str | None = None) -> bool:
    answers = _validate_answers(answers)
    with transaction.atomic():
        question = _pending_for(user, request_id, session_id)
        question.status = "replied"
        question.answers = answers
        question.save(update_fields=["status", "answers"])
        publish_for(question.session, "question.replied",
                    {"sessionID": question.session_id, "requestID": question.id, "answers": answers})
    if question.tool:
        from sessions_app.runtime.supervisor import wake_if_orphaned

        wake_if_orphaned(question.session_id)  # a call interrupted by a restart resumes (runtime/resume.py)
    return True


def question_reject(*, user, request_id: str, session_id: str | None = None) -> bool:
    with transaction.atomic():
        reject_question(_pending_for(user, request_id, session_id))
    return True


def reject_pending_questions(*, session: Session) -> int:
    with transaction.atomic():
        rows = list(Question.objects.select_for_update().select_related("session")
                    .filter(session=session, status="pending").order_by("id"))
        for row in rows:
            reject_question(row)
    return len(rows)
