"""The pending request rows of either kind (PermissionRequest, Question; runtime/pending_requests.py says what
a kind is): stored, read, locked for an answer and settled. Each function takes the kind's model; the
questions about one tool call ask both kinds."""
from __future__ import annotations

from typing import Any

from django.db import models

from sessions_app.models import PermissionRequest, Question, Session

Model = type[models.Model]


def insert(model: Model, **fields) -> Any:
    return model.objects.create(**fields)


def exists(model: Model, request_id: str) -> bool:
    return model.objects.filter(id=request_id).exists()


def newest_of_session(model: Model, session: Session, *, limit: int, **filters) -> list:
    """The session's newest `limit` rows matching `filters`, newest first."""
    return list(model.objects.filter(session=session, **filters).order_by("-id")[:limit])


def locked_pending(model: Model, **filters) -> list:
    """The pending rows matching `filters`, locked for an answer (in the caller's transaction), oldest first."""
    return list(model.objects.select_for_update().select_related("session")
                .filter(status="pending", **filters).order_by("id"))


def pending_of_owner(model: Model, *, user, project_id: str | None = None, session: Session | None = None) -> list:
    """The pending rows of `user`'s sessions, oldest first; of one project or one session."""
    rows = model.objects.filter(session__owner=user, status="pending").order_by("id")
    if project_id is not None:
        rows = rows.filter(session__project_id=project_id)
    if session is not None:
        rows = rows.filter(session=session)
    return list(rows)


def pending_in_session(model: Model, *, session: Session, request_id: str) -> Any | None:
    return model.objects.filter(id=request_id, session=session, status="pending").first()


def save_outcome(row, fields: list[str]) -> None:
    """Store the row's status and these fields, already set on it."""
    row.save(update_fields=fields)


def mark_used(model: Model, request_id: str) -> None:
    """A replied request whose waiting tool read the answer and went on."""
    model.objects.filter(id=request_id, status="replied").update(status="used")


def status_and(model: Model, request_id: str, fields: tuple[str, ...]) -> tuple | None:
    """(status, *fields) of the request, None when it is gone."""
    return model.objects.filter(id=request_id).values_list("status", *fields).first()


def calls_waiting_on_user(session_id: str, call_ids: list[str]) -> list[str]:
    """Of these tool calls, those with a permission request or question still pending or replied (not yet
    read by the tool)."""
    out = []
    for call_id in call_ids:
        unseen = ("pending", "replied")
        if (PermissionRequest.objects.filter(session_id=session_id, tool__callID=call_id, status__in=unseen).exists()
                or Question.objects.filter(session_id=session_id, tool__callID=call_id, status__in=unseen).exists()):
            out.append(call_id)
    return out


def call_answers(session_id: str, call_id: str) -> tuple[list[tuple[str, str]], list[str]]:
    """A tool call's permission requests as (status, reply) and its questions' statuses."""
    permissions = list(PermissionRequest.objects.filter(session_id=session_id, tool__callID=call_id)
                       .values_list("status", "reply"))
    questions = list(Question.objects.filter(session_id=session_id, tool__callID=call_id)
                     .values_list("status", flat=True))
    return permissions, questions
