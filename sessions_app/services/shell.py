"""session.shell (reference §5.13): run a command the user typed, without the model. A synthetic user
message "The following tool was executed by the user", an assistant message holding one `bash` tool part
that streams the output into metadata.output, completed when the command exits.

It holds the session's lease while it runs (a busy session → 409), renewing it as a runner does, so it never
interleaves with a turn; prompts arriving meanwhile queue and are started when it ends. Abort kills its
process group, from any worker: the shell listens on the session's channel-layer group as a runner does."""
from __future__ import annotations

import subprocess
import threading
import time
import uuid
from dataclasses import dataclass

from django.db import transaction

from agentserver import ids
from agentserver.clock import now_ms
from agentserver.context import RuntimeContext
from agentserver.errors import SessionBusy
from agentserver.sandbox import launcher as sandbox
from agentserver.workers import liveness as workers
from agentserver.workers import loop as server_loop
from audit_app.log import record
from policy_app.direct_commands import check_direct_command
from sessions_app.models import Message, Part, Session
from sessions_app.runtime import leases, parts, supervisor
from sessions_app.runtime.message_queue import next_pending
from sessions_app.runtime.runner import RENEW_SECONDS, group_name
from sessions_app.runtime.tools.base import ToolResult
from sessions_app.runtime.turn_setup import load_config, session_context
from sessions_app.services.revert import (
    do_revert_finalize,
    revert_summarize,
    reverted_message_ids,
)
from sessions_app.store import messages as message_service
from sessions_app.store.leases import BUSY, IDLE
from sessions_app.store.rows import parts_of

UPDATE_SECONDS = 0.1
ABORT_NOTE = "\n\n<metadata>User aborted the command</metadata>"
# A session's shell from its lease on; the process is None until started, so an abort that comes before the
# (sandboxed, not instant) start is remembered and kills the process as soon as it exists.
_running: dict[str, subprocess.Popen | None] = {}
_aborted: set[str] = set()


def shell_abort(session_id: str) -> bool:
    if session_id not in _running:
        return False
    _aborted.add(session_id)
    process = _running.get(session_id)
    if process is not None:
        sandbox.kill_group(process.pid)
    return True




def _listen_for_abort(session_id: str):
    """An abort sent to another worker reaches the session's group (supervisor.abort_runner); a future to
    cancel when the command ends, None without an event loop to listen on."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is None:
        return None
    joined = threading.Event()

    async def listen() -> None:
        channel = await layer.new_channel()
        await layer.group_add(group_name(session_id), channel)
        joined.set()
        try:
            while True:
                message = await layer.receive(channel)
                if message.get("type") == "runner.abort":
                    shell_abort(session_id)
        finally:
            try:
                await layer.group_discard(group_name(session_id), channel)
            except Exception:  # noqa: BLE001
                pass

    future = server_loop.start(listen())
    if future is not None:
        joined.wait(5)  # an abort sent right after the command started must not slip past
    return future


def _status(session: Session, holder: str, status: dict) -> None:
    leases.set_status(session.id, holder, status)
    message_service.publish_for(session, "session.status", {"sessionID": session.id, "status": status})


@dataclass(frozen=True)
class CheckedShell:
    """A shell command everything has been checked for: what running it needs."""
    session: Session
    context: RuntimeContext
    agent: str
    model: dict
    command: str
    message_id: str | None


def check_shell(*, session: Session, agent: str, command: str, model: dict | None,
                message_id: str | None = None) -> CheckedShell:
    """Everything that can refuse the command, changing nothing: managed policy, the agent, the model (chosen
    as if a staged revert were final), the message id, and whether processes can start here at all."""
    from sessions_app.runtime.agents import agent_get
    from sessions_app.services.model_choice import choose_model

    check_direct_command(user=session.owner, what="session.shell", action="session.shell", object_type="session",
                         object_id=session.id, session_id=session.id, details={"command": command, "agent": agent})
    context = session_context(session)
    config = load_config(context)
    agent_info = agent_get(config, agent)
    chosen = choose_model(context=context, config=config, session=session, agent=agent_info, requested=model,
                          ignoring=reverted_message_ids(session))
    message_service.check_new_message_id(session=session, message_id=message_id)
    sandbox.require()  # no half-written exchange when processes cannot start
    return CheckedShell(session=session, context=context, agent=agent, model=chosen, command=command,
                        message_id=message_id)


def do_shell(shell: CheckedShell) -> tuple[Message, list[Part]]:
    """Run a checked command holding the session's lease (busy → 409): a staged revert is made final and the
    exchange stored in one transaction, then the command runs and its output streams into the tool part."""
    session = shell.session
    holder = f"{workers.WORKER_ID}:shell:{uuid.uuid4().hex[:8]}"
    if not leases.acquire(session.id, holder):
        raise SessionBusy(f"Session is busy: {session.id}", sessionID=session.id)
    _running[session.id] = None
    listener = _listen_for_abort(session.id)
    try:
        _status(session, holder, BUSY)
        return _run(session, shell.context, shell.agent, shell.model, shell.command, holder, shell.message_id)
    finally:
        if listener is not None:
            listener.cancel()
        _running.pop(session.id, None)
        _aborted.discard(session.id)
        leases.release(session.id, holder)
        message_service.publish_for(session, "session.status", {"sessionID": session.id, "status": IDLE})
        message_service.publish_for(session, "session.idle", {"sessionID": session.id})
        if next_pending(session.id) is not None:
            supervisor.kick(session.id)


def session_shell(*, session: Session, agent: str, command: str, model: dict | None,
                  message_id: str | None = None) -> tuple[Message, list[Part]]:
    """session.shell: check, then do. A refused command records nothing and leaves a staged revert staged."""
    return do_shell(check_shell(session=session, agent=agent, command=command, model=model,
                                message_id=message_id))


def _run(session: Session, context, agent: str, model: dict, command: str, holder: str,
         message_id: str | None = None):
    user_id = message_id or message_service.new_message_id(session)
    user = {"id": user_id, "sessionID": session.id, "role": "user", "time": {"created": now_ms()}, "agent": agent,
            "model": model}
    note = {"id": ids.ascending("prt"), "sessionID": session.id, "messageID": user_id, "type": "text",
            "text": "The following tool was executed by the user", "synthetic": True}
    info = parts.assistant_info(session_id=session.id, parent_id=user_id, agent_name=agent, model=model,
                                cwd=context.directory,
                                root=context.worktree if context.vcs else context.directory)
    args = {"command": command}
    part = parts.new_part(session.id, info["id"], "tool", callID=uuid.uuid4().hex.upper()[:26], tool="bash",
                          state=parts.tool_running(args))
    with transaction.atomic():
        finalized = do_revert_finalize(session=session)  # a staged revert becomes final before the exchange
        message_service.message_save(session=session, info=user)
        message_service.part_save(session=session, part=note)
        assistant = message_service.message_save(session=session, info=info)
        message_service.part_save(session=session, part=part)
        record(action="session.shell", object_type="session", object_id=session.id, session_id=session.id,
               details={"command": command, "agent": agent, "messageID": user_id, "callID": part["callID"]})
    if finalized:
        revert_summarize(session=session)

    from auth_app.tokens import roots_of
    from sessions_app.runtime.tools.bash import child_environment

    roots = roots_of(session.owner)
    env = child_environment(home=roots[0] if roots else context.directory)
    shell = env["SHELL"]
    process = sandbox.popen(session.owner, [shell, "-c", command], cwd=context.directory, env=env, roots=roots,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    _running[session.id] = process
    if session.id in _aborted:
        sandbox.kill_group(process.pid)
    output = bytearray()
    done = threading.Event()

    def pump() -> None:
        for chunk in iter(lambda: process.stdout.read1(65536), b""):
            output.extend(chunk)
        done.set()

    threading.Thread(target=pump, daemon=True).start()
    last = ""
    renew_at = time.monotonic() + RENEW_SECONDS
    while not done.wait(UPDATE_SECONDS):
        if time.monotonic() >= renew_at:
            renew_at = time.monotonic() + RENEW_SECONDS
            if not leases.renew(session.id, holder):  # the session went to another worker: stop
                shell_abort(session.id)
        text = output.decode(errors="replace")
        if text != last:
            last = text
            part["state"] = {**part["state"], "metadata": {"output": text, "description": ""}}
            message_service.part_save(session=session, part=part)
    process.wait()
    text = output.decode(errors="replace")
    if session.id in _aborted:
        text += ABORT_NOTE
    result = ToolResult(output=text, metadata={"output": text, "description": ""})
    part["state"] = parts.tool_completed(part["state"], args, result, session_id=session.id, message_id=info["id"])
    message_service.part_save(session=session, part=part)
    assistant = message_service.message_save(session=session, info=parts.completed(info))
    return assistant, parts_of(assistant.id)
