"""The session's todo list: replaced whole by the `todowrite` tool, read by `session.todo`."""
from __future__ import annotations

from django.db import transaction

from sessions_app.models import Session, Todo
from sessions_app.store.messages import publish_for
from sessions_app.wire import todo_wire

STATUSES = {"pending", "in_progress", "completed", "cancelled"}
PRIORITIES = {"high", "medium", "low"}


def todos_of(session_id: str) -> list[Todo]:
    """The session's todo list, in order."""
    return list(Todo.objects.filter(session_id=session_id).order_by("position"))


def todos_replace(*, session: Session, todos: list[dict]) -> list[Todo]:
    rows = [
        Todo(session=session, position=index, content=str(item.get("content", "")),
             status=str(item.get("status", "pending")), priority=str(item.get("priority", "medium")),
             todo_id=item.get("id") if isinstance(item.get("id"), str) else None)
        for index, item in enumerate(todos)
    ]
    with transaction.atomic():
        # Two replacements must not interleave (delete, delete, insert, insert would keep both lists):
        # the session row's lock serializes them on PostgreSQL as SQLite's write lock does.
        Session.objects.select_for_update().filter(pk=session.pk).first()
        Todo.objects.filter(session=session).delete()
        Todo.objects.bulk_create(rows)
    publish_for(session, "todo.updated", {"sessionID": session.id, "todos": [todo_wire(t) for t in rows]})
    return rows
