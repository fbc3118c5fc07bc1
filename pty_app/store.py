"""The terminal rows (Pty) and connect tickets (PtyTicket), and the only code that touches them: selectors.py
reads them for a caller; the services, the manager, the exits and the tickets change them through here. A
row's deletion decides who announces a terminal's end (exits.py), so each delete says whether it deleted."""
from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from agentserver.clock import DatabaseNow
from pty_app.models import Pty, PtyTicket

# ---- terminals ---------------------------------------------------------------------------------------------


def pty_created(**fields) -> Pty:
    return Pty.objects.create(**fields)


def pty_by_id(pty_id: str) -> Pty | None:
    return Pty.objects.filter(id=pty_id).first()


def pid_set(pty_id: str, pid: int | None) -> None:
    Pty.objects.filter(id=pty_id).update(pid=pid)


def pty_changed(pty_id: str, *, title: str, rows: int, cols: int, time_updated: int) -> bool:
    """Whether the row was there to change."""
    return bool(Pty.objects.filter(id=pty_id).update(title=title, rows=rows, cols=cols, time_updated=time_updated))


def pty_deleted(pty_id: str) -> bool:
    """Whether this call deleted the row (it was there)."""
    return bool(Pty.objects.filter(id=pty_id).delete()[0])


def pty_deleted_if_on(pty_id: str, worker_id: str) -> bool:
    """Whether this call deleted the row, still the one of that worker."""
    return bool(Pty.objects.filter(id=pty_id, worker_id=worker_id).delete()[0])


def ptys_of_workers(worker_ids: set[str] | list[str]) -> list[Pty]:
    return list(Pty.objects.filter(worker_id__in=worker_ids))


def ptys_of_worker(worker_id: str) -> list[Pty]:
    return list(Pty.objects.filter(worker_id=worker_id))


def workers_but(worker_id: str) -> set[str]:
    """The workers other than this one that own terminal rows."""
    return set(Pty.objects.exclude(worker_id=worker_id).values_list("worker_id", flat=True).distinct())


# ---- connect tickets ---------------------------------------------------------------------------------------


def ticket_made(*, key_hash: str, owner, pty_id: str, credential: str, seconds: int) -> None:
    """A ticket valid for `seconds` by the database's clock (the redeeming host's may differ from ours), made in
    one transaction with dropping the expired ones."""
    with transaction.atomic():
        PtyTicket.objects.filter(expires_at__lte=DatabaseNow()).delete()
        PtyTicket.objects.create(key_hash=key_hash, owner=owner, pty_id=pty_id, credential=credential,
                                 expires_at=DatabaseNow() + seconds * 1000)


def ticket_used_up(key_hash: str) -> PtyTicket | None:
    """The ticket, its owner read with it and `expired` said by the database's clock, deleted; None when
    there is none."""
    with transaction.atomic():
        row = (PtyTicket.objects.select_for_update().select_related("owner").filter(key_hash=key_hash)
               .annotate(expired=Q(expires_at__lte=DatabaseNow())).first())
        if row is None:
            return None
        row.delete()
    return row
