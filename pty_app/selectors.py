"""Reads, always scoped to the caller. Rows whose worker is provably gone (same host, process dead) are
stale: a crashed worker cannot clean up after itself, so readers do it."""
import os

from agentserver.errors import NotFound
from pty_app.manager import HOST, get_manager
from pty_app.models import Pty


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(row: Pty) -> bool:
    manager = get_manager()
    if row.worker_id == manager.worker_id:
        return not manager.holds(row.id)
    if row.worker_host != HOST:
        return False  # another machine: only a remote request that goes unanswered can tell
    if row.worker_pid == os.getpid():
        return True  # our pid, but an earlier incarnation of this worker
    return not _process_alive(row.worker_pid)


def _live(rows) -> list[Pty]:
    live, stale = [], []
    for row in rows:
        (stale if is_stale(row) else live).append(row)
    if stale:
        Pty.objects.filter(id__in=[row.id for row in stale]).delete()
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
