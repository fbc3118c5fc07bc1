"""Questions the agent asks the user (the `question` tool, reference §3.10/§5.6), the user's side: how an
answer is checked and what it does. Listing, replying and rejecting are services/pending.py's for both kinds.
The tool asks and waits through runtime/asking.py (re-exported here for callers of this service)."""
from __future__ import annotations

from agentserver.errors import BadRequest
from sessions_app.models import Question, Session
from sessions_app.runtime import pending_requests
from sessions_app.runtime.asking import (DISMISSED_TEXT, QUESTION, ask_question, question_wire,  # noqa: F401
                                         reject_question)
from sessions_app.services import pending
from sessions_app.services.pending import Answering


def _check(answer: dict) -> None:
    answers = answer["answers"]
    if not isinstance(answers, list) or not all(
            isinstance(a, list) and all(isinstance(x, str) for x in a) for a in answers):
        raise BadRequest("answers: expected an array of arrays of strings", kind="Body",
                         issues=[{"path": ["answers"], "message": "expected string[][]"}])


def _apply(question: Question, answer: dict) -> bool:
    answers = answer["answers"]
    pending_requests.settle(QUESTION, question, status="replied", happened="replied", stored={"answers": answers},
                            announced={"answers": answers})
    return True


ANSWERING = Answering(kind=QUESTION, noun="Question request", check=_check, apply=_apply)


def question_reply(*, user, request_id: str, answers, session_id: str | None = None) -> bool:
    return pending.request_reply(ANSWERING, user=user, request_id=request_id, session_id=session_id,
                                 answer={"answers": answers})


def question_reject(*, user, request_id: str, session_id: str | None = None) -> bool:
    return pending.request_reject(ANSWERING, user=user, request_id=request_id, session_id=session_id)


def reject_pending_questions(*, session: Session) -> int:
    return pending.reject_all(ANSWERING, session=session)
