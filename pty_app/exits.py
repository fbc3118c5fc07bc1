"""How a terminal's end is recorded and announced. The manager calls `pty_exited` when it reaps a child, and
the services publish through `publish`: both live below the manager and the services so neither imports the
other. The row's deletion is the single arbiter of who announces the end: whoever deletes it publishes
pty.deleted."""
from django.db import transaction

from agentserver import events
from pty_app.models import Pty


def publish(type_: str, properties: dict, row: Pty) -> None:
    events.publish(type_, properties, owner_id=row.owner_id, directory=row.directory,
                   workspace_id=row.workspace_id, project_id=row.project_id)


def pty_exited(*, pty_id: str, exit_code: int | None, announce_exit: bool) -> None:
    """Called by the owning manager once the child is reaped. Removal already deleted the row (and
    announced it); a natural exit announces pty.exited then pty.deleted."""
    row = Pty.objects.filter(id=pty_id).first()
    if row is None:
        return
    with transaction.atomic():
        if not Pty.objects.filter(id=pty_id).delete()[0]:
            return
        if announce_exit:
            publish("pty.exited", {"id": pty_id, "exitCode": exit_code if exit_code is not None else 0}, row)
        publish("pty.deleted", {"id": pty_id}, row)
