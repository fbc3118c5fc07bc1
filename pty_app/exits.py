"""How a terminal's end is recorded and announced. The manager calls `pty_exited` when it reaps a child, and
the services publish through `publish`: both live below the manager and the services so neither imports the
other. The row's deletion is the single arbiter of who announces the end: whoever deletes it publishes
pty.deleted."""
from django.db import transaction

from agentserver.events import publisher as events
from agentserver.workers import liveness as workers
from audit_app.actors import Actor
from audit_app.log import record
from pty_app import store
from pty_app.models import Pty


def publish(type_: str, properties: dict, row: Pty) -> None:
    events.publish(type_, properties, owner_id=row.owner_id, directory=row.directory,
                   workspace_id=row.workspace_id, project_id=row.project_id)


def record_closed(row: Pty, *, reason: str, exit_code: int | None = None, actor: Actor | None = None) -> None:
    """The audit record of a terminal's end, written by whoever deletes its row, in that transaction."""
    record(action="pty.closed", actor=actor or Actor.system("terminal manager"), object_type="pty", object_id=row.id,
           details={"owner": row.owner_id, "command": row.command, "reason": reason, "exitCode": exit_code})


def pty_exited(*, pty_id: str, exit_code: int | None, announce_exit: bool) -> None:
    """Called by the owning manager once the child is reaped. Removal already deleted the row (and
    announced it); a natural exit announces pty.exited then pty.deleted."""
    row = store.pty_by_id(pty_id)
    if row is None:
        return
    with transaction.atomic():
        if not store.pty_deleted(pty_id):
            return
        record_closed(row, reason="exited", exit_code=exit_code)
        if announce_exit:
            publish("pty.exited", {"id": pty_id, "exitCode": exit_code if exit_code is not None else 0}, row)
        publish("pty.deleted", {"id": pty_id}, row)


def remove_orphans(rows: list[Pty]) -> None:
    """Rows whose terminal is gone with its worker: delete them and announce pty.deleted (each once, by
    whoever deletes it)."""
    for row in rows:
        with transaction.atomic():
            if store.pty_deleted_if_on(row.id, row.worker_id):
                record_closed(row, reason="its worker is gone")
                publish("pty.deleted", {"id": row.id}, row)


def dead_workers(worker_ids: set[str]) -> set[str]:
    return worker_ids - workers.alive(worker_ids)


def remove_dead_workers_terminals() -> int:
    """Every worker looks now and then (PtyManager's sweeper): a dead worker's terminals leave every list,
    stop counting toward their owner's limit and are announced as deleted within a bounded time."""
    others = store.workers_but(workers.WORKER_ID)
    dead = dead_workers(others) if others else set()
    if not dead:
        return 0
    rows = store.ptys_of_workers(dead)
    remove_orphans(rows)
    return len(rows)
