"""The Pty record on the wire: {id, title, command, args, cwd, status, pid} (+ exitCode once exited)."""
from pty_app.models import Pty


def pty_wire(row: Pty) -> dict:
    wire = {
        "id": row.id,
        "title": row.title,
        "command": row.command,
        "args": list(row.args or []),
        "cwd": row.cwd,
        "status": row.status,
        "pid": row.pid or 0,
    }
    if row.exit_code is not None:
        wire["exitCode"] = row.exit_code
    return wire
