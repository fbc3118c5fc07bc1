"""Writes: create, update, remove a terminal (its exit is recorded by pty_app.exits). The process lives in
a worker's PtyManager; the row makes it visible to every worker. The row's deletion is the single arbiter
of who announces the end: whoever deletes it publishes pty.deleted."""
import os
import shutil

from django.db import transaction

from agentserver import ids, paths
from agentserver.context import RuntimeContext
from agentserver.errors import BadRequest, NotFound, TooManyRequests
from agentserver.sandbox import launcher as sandbox
from audit_app.actors import current as current_actor
from audit_app.log import record
from auth_app.tokens import roots_of
from policy_app.direct_commands import check_direct_command
from projects_app.contexts import default_directory
from pty_app import conf, selectors, store
from pty_app.environment import child_environment, default_shell
from pty_app.exits import publish, record_closed
from pty_app.manager import HOST, SpawnFailed, get_manager
from pty_app.models import Pty, now_ms
from pty_app.terminal import SpawnSpec
from pty_app.wire import pty_wire


def _executable(command: str, *, cwd: str, search_path: str) -> str:
    if "/" in command:
        candidate = command if os.path.isabs(command) else os.path.join(cwd, command)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    else:
        found = shutil.which(command, path=search_path)
        if found:
            return found
    # Well-formed input naming something that is not there: 404, as for any object that is not there.
    raise NotFound(f"Command not found or not executable: {command}")


def _check_env(env: dict) -> dict:
    for key, value in env.items():
        if not key or "=" in key or "\x00" in key or "\x00" in value:
            raise BadRequest(f"Invalid environment variable: {key!r}", kind="Body",
                             issues=[{"path": ["env", key], "message": "invalid name or value"}])
    return env


def pty_create(*, context: RuntimeContext, command: str | None = None, args: list[str] | None = None,
               cwd: str | None = None, title: str | None = None, env: dict | None = None,
               rows: int = 24, cols: int = 80) -> Pty:
    user = context.user
    check_direct_command(user=user, what="Opening a terminal", action="pty.opened", object_type="pty",
                         details={"command": command or default_shell(), "args": list(args or []),
                                  "directory": context.directory})
    if cwd:
        real_cwd = paths.confine(cwd, roots_of(user), relative_to=context.directory)
    else:
        real_cwd = context.directory
    if not os.path.isdir(real_cwd):
        raise NotFound(f"Working directory does not exist: {cwd or real_cwd}")
    child_env = child_environment(home=default_directory(user), extra=_check_env(env or {}))
    command = command or default_shell()
    executable = _executable(command, cwd=real_cwd, search_path=child_env.get("PATH", ""))
    args = list(args or [])
    if command.endswith("sh"):
        args.append("-l")  # the reference's quirk: every *sh command becomes a login shell

    limit = conf.max_per_user()
    if limit and selectors.pty_count(user=user) >= limit:
        raise TooManyRequests(f"Too many terminals: at most {limit} may run at once; remove one first",
                              limit=limit)

    launch = sandbox.prepare(user, [executable, *args], cwd=real_cwd, env=child_env, terminal=True)
    manager = get_manager()
    channel = manager.start_sync()
    pty_id = ids.ascending("pty")
    manager.reserve(pty_id)
    row = store.pty_created(
        id=pty_id, owner=user, directory=context.directory, project_id=context.project_id,
        workspace_id=context.workspace_id, title=title or f"Terminal {pty_id[-4:]}", command=command, args=args,
        cwd=real_cwd, rows=rows, cols=cols, worker_id=manager.worker_id, worker_host=HOST,
        worker_pid=os.getpid(), worker_channel=channel,
    )
    spec = SpawnSpec(pty_id=pty_id, owner_id=user.pk, directory=context.directory, argv=launch.argv,
                     cwd=launch.cwd, env=launch.env, rows=rows, cols=cols)
    try:
        row.pid = manager.call(manager.spawn(spec))
    except SpawnFailed as error:
        manager.release(pty_id)
        store.pty_deleted(pty_id)
        raise BadRequest(f"Could not start {command}: {error}", kind="Body") from error
    with transaction.atomic():
        store.pid_set(pty_id, row.pid)
        record(action="pty.opened", object_type="pty", object_id=pty_id,
               details={"command": command, "args": args, "cwd": real_cwd, "directory": context.directory})
    publish("pty.created", {"info": pty_wire(row)}, row)
    manager.mark_ready(pty_id)
    return row


def _owner_request(row: Pty, message: dict) -> bool:
    """Deliver a control message to the worker that owns the terminal. False when nobody owns it any more
    (the row was stale and is now gone)."""
    manager = get_manager()
    manager.start_sync()
    if manager.runs(row.id):
        if message["type"] == "pty.resize":
            return manager.call(manager.resize(row.id, message["rows"], message["cols"]))
        return manager.call(manager.kill(row.id))
    answer = None
    if row.worker_channel and manager.layer is not None and row.worker_id != manager.worker_id:
        answer = manager.call(manager.remote_request(row.worker_channel, {**message, "id": row.id}))
    if answer is None or not answer.get("ok"):
        store.pty_deleted(row.id)
        return False
    return True


def pty_update(*, user, pty_id: str, title: str | None = None, size: dict | None = None) -> Pty:
    row = selectors.pty_get(user=user, pty_id=pty_id)
    if size is not None:
        if not _owner_request(row, {"type": "pty.resize", "rows": size["rows"], "cols": size["cols"]}):
            raise NotFound(f"PTY session not found: {pty_id}", ptyID=pty_id)
        row.rows, row.cols = size["rows"], size["cols"]
    if title:
        row.title = title
    row.time_updated = now_ms()
    with transaction.atomic():
        if not store.pty_changed(pty_id, title=row.title, rows=row.rows, cols=row.cols,
                                 time_updated=row.time_updated):
            raise NotFound(f"PTY session not found: {pty_id}", ptyID=pty_id)
        publish("pty.updated", {"info": pty_wire(row)}, row)
    return row


def pty_remove(*, user, pty_id: str) -> None:
    row = selectors.pty_get(user=user, pty_id=pty_id)
    with transaction.atomic():
        if not store.pty_deleted(pty_id):
            raise NotFound(f"PTY session not found: {pty_id}", ptyID=pty_id)
        record_closed(row, reason="removed", actor=current_actor())
        publish("pty.deleted", {"id": pty_id}, row)
    # The row is gone (GET is 404 from now on); the process group follows.
    _owner_request(row, {"type": "pty.kill"})
