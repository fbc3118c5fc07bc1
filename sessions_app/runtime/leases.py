"""The session lease: one row per session saying which worker runs its agent loop, until when, and in what
status. Acquiring is one conditional UPDATE (or an INSERT that loses on the primary key), so at most one
worker across the deployment holds a live lease; a dead worker's lease simply expires. Every expiry is
computed and compared by the database's clock (agentserver.clock.DatabaseNow), never a host's; the rows are
store/leases.py's."""
from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from agentserver import ids
from sessions_app.store import leases as lease_rows
from sessions_app.store.sessions import session_exists

LEASE_MS = lease_rows.LEASE_MS


def acquire(session_id: str, holder: str) -> bool:
    """Take the lease if it is free, expired or already ours (expiry by the database's clock)."""
    if lease_rows.take_if_free(session_id, holder):  # one statement: the row exists after the session's first run
        return True
    with transaction.atomic():  # no row yet, or a row someone else holds: decide under one transaction
        if lease_rows.take_if_free(session_id, holder):
            return True
        if lease_rows.row_exists(session_id):
            return False
        if not session_exists(session_id):
            return False
    return lease_rows.insert_held(session_id, holder)


def renew(session_id: str, holder: str) -> bool:
    """False when the lease is no longer ours (it expired and another worker took it): stop working on it."""
    return lease_rows.renew(session_id, holder)


def set_status(session_id: str, holder: str, status: dict) -> None:
    lease_rows.set_status(session_id, holder, status)


def release(session_id: str, holder: str) -> bool:
    return lease_rows.release(session_id, holder)


def hand_over(session_id: str, holder: str) -> bool:
    """Let the lease expire now but keep it held: every worker's janitor sees a session whose runner is gone
    (dead_sessions) and one of them adopts it and answers what is queued. A stopping worker's way out; a
    lease it released meanwhile is taken back to be handed over, one another worker took is left alone."""
    return lease_rows.expire_held(session_id, holder)


def is_live(session_id: str) -> bool:
    return lease_rows.is_live(session_id)


def live_sessions(session_ids: list[str]) -> list[str]:
    return lease_rows.live_among(session_ids)


def stranded_sessions(*, since_ms: int, until_ms: int, limit: int = 100) -> list[str]:
    """Sessions with a prompt stored between the two times (by the ids' clock) that no assistant message
    follows and no live lease answers: the host that stored it died before its runner took the lease (after
    a 204 from prompt_async too), and nobody prompts the session again to start one. The runner that
    adopts one answers exactly what its queue holds (runtime/message_queue.py)."""
    low, high = ids.ascending_floor("msg", since_ms), ids.ascending_floor("msg", until_ms)
    window = Q(id__gte=low, id__lt=high) if low < high else Q(id__gte=low) | Q(id__lt=high)
    return lease_rows.unanswered_unheld(window=window, limit=limit)


def dead_sessions(limit: int = 100) -> list[str]:
    """Sessions whose runner died: the lease is held by someone but has expired."""
    return lease_rows.expired_but_held(limit)
