"""Deleting a session as a user does: its agent loops (and those of its descendants) are stopped first, so
none writes into deleted rows, then store/sessions.py deletes the rows."""
from __future__ import annotations

from sessions_app.models import Session
from sessions_app.runtime import supervisor
from sessions_app.store import sessions


def session_delete(*, session: Session) -> bool:
    supervisor.stop_runners(sessions.session_family_ids(session))
    return sessions.session_delete(session=session)
