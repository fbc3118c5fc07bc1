"""Reads, always scoped to the caller. Rows whose worker is dead (agentserver.workers.liveness: its heartbeat expired,
or on one host its process is gone) are orphans: a crashed worker cannot clean up after itself, so readers
remove them (and announce it), as every worker's sweeper does now and then."""
import os

from agentserver.errors import NotFound
from pty_app.exits import dead_workers, remove_orphans
from pty_app.manager import get_manager
from pty_app.models import Pty


def _live(rows) -> list[Pty]:
    manager = get_manager()
    rows = list(rows)
    dead = dead_workers({row.worker_id for row in rows if row.worker_id != manager.worker_id})
    live, stale = [], []
    for row in rows:
        if row.worker_id == manager.worker_id:
            gone = not manager.holds(row.id)
        else:
            gone = row.worker_id in dead
        (stale if gone else live).append(row)
    if stale:
        remove_orphans(stale)
    return live


def pty_list(*, user, directory: str) -> list[Pty]:
    return _live(Pty.objects.filter(owner=user, directory=directory).order_by("id"))


def pty_count(*, user) -> int:
    return len(_live(Pty.objects.filter(owner=user)))


def pty_lookup(*, user, pty_id: str) -> Pty | None:
    row = Pty.objects.filter(owner=user, id=pty_id).first()
    if row is None or not _live([row]):
        return None
    return row


def pty_get(*, user, pty_id: str) -> Pty:
    row = pty_lookup(user=user, pty_id=pty_id)
    if row is None:
        raise NotFound(f"PTY session not found: {pty_id}", ptyID=pty_id)
    return row


def shells() -> list[dict]:
    """The login shells of this machine (/etc/shells), for a client's shell picker."""
    from pty_app.environment import default_shell

    candidates = [default_shell()]
    try:
        with open("/etc/shells") as handle:
            candidates += [line.strip() for line in handle if line.strip().startswith("/")]
    except OSError:
        pass
    seen, out = set(), []
    for path in candidates:
        if path in seen:
            continue
        seen.add(path)
        out.append({"path": path, "name": os.path.basename(path),
                    "acceptable": os.path.isfile(path) and os.access(path, os.X_OK)})
    return out
