"""Tool calls interrupted by a worker's death while they waited on the user (reference §5.3 meets the
issue's "pending requests survive a restart and can still be answered").

The choice, both halves true:
- Restart behaves as the reference: the recovering runner closes the dead runner's assistant message with
  MessageAbortedError and its waiting tool part as an error. The call's permission request / question stays
  pending (listed by `GET /permission`, `GET /question`); the recovery notes the call on the message
  (private info key `_interrupted`, never on the wire).
- Answering such a request later is accepted and recorded as always. An answer that allows the call
  (permission `once`/`always`, a question's answers) resumes the turn: the runner re-runs the call under
  the same callID in a new assistant message (same parent user message; it finds its answered request
  and does not ask again), the interrupted tool part moves there (removed from the aborted message, so the
  model sees the call once), and the loop goes on with the model. A rejection resumes nothing: the session
  stays idle and continues with the next prompt. The resume only happens while the aborted message is the
  session's last assistant message: once the session has moved on, an answer is only recorded.

"Was the answer seen by the dead runner?" decides whether a call counts as interrupted: a waiting tool
marks its request `used` when it reads an allowing answer (runtime/pending_requests.py); a
request still `pending` or `replied` (answered, unseen) at recovery means the tool never ran.

A turn cut by its worker's death with nothing waiting on the user goes on where it stopped, on the worker that
adopts the session (a team's server has the history, the tool results and the snapshots in shared storage;
opencode's one process cannot do this): the step in flight keeps the calls that finished, a call that was
running is closed as interrupted (the model is told so), and the turn continues with the next model call; a
step whose model call was still streaming and had started no call is removed and made again. So the person
sees one answer, complete, with the interruption visible in a tool part. A child session answered inline by
a task call is closed as aborted as before (its parent's task call is the one that goes on), and so is a turn
a stopping worker gave up on after its grace period (supervisor: aborting on purpose stays an abort).
A step that the turn goes on after carries `_continues` (private, never on the wire) until the turn ends."""
from __future__ import annotations

from agentserver.clock import now_ms
from agentserver.workers.loop import db
from sessions_app.models import Message, Session
from sessions_app.runtime import metering, parts
from sessions_app.runtime.scope import RunScope
from sessions_app.runtime.subtasks import Turns, child_runner
from sessions_app.store import messages as message_service
from sessions_app.store.leases import BUSY
from sessions_app.store.pending import call_answers, calls_waiting_on_user
from sessions_app.store.rows import latest_assistant, parts_of, session_row

INTERRUPTED_KEY = "_interrupted"
CONTINUES_KEY = "_continues"
ALLOWING = ("once", "always")
CALL_INTERRUPTED = ("Tool execution was interrupted: the server running it stopped before it finished. Its "
                    "effects may be partial: check before running it again.")


def waiting_calls(session_id: str, call_ids: list[str]) -> list[str]:
    """Of these tool calls, those whose permission request or question the tool had not acted on yet."""
    return calls_waiting_on_user(session_id, call_ids)


def _call_state(session_id: str, call_id: str) -> str:
    """"pending" (still waiting for the user), "allowed" or "rejected"."""
    permissions, questions = call_answers(session_id, call_id)
    if any(s == "pending" for s, _ in permissions) or "pending" in questions:
        return "pending"
    if any(r not in ALLOWING for _, r in permissions) or "rejected" in questions:
        return "rejected"
    return "allowed"


def resumable(session_id: str) -> tuple[Message, Message, dict] | None:
    """(user message, interrupted assistant message, tool part) of a call to re-run now, if any."""
    last = latest_assistant(session_id)
    if last is None or not last.info.get(INTERRUPTED_KEY):
        return None
    if (last.info.get("error") or {}).get("name") != "MessageAbortedError":
        return None
    calls = last.info[INTERRUPTED_KEY]
    for part in message_service.parts_of_type(last.id, "tool"):
        call_id = part.data.get("callID")
        if call_id in calls and _call_state(session_id, call_id) == "allowed":
            user = message_service.message_of(session_id, last.info.get("parentID"))
            return (user, last, part.data) if user is not None else None
    return None


def _forget_call(session: Session, message: Message, part: dict) -> None:
    message_service.part_remove(session=session, message_id=message.id, part_id=part["id"])
    info = {**message.info, INTERRUPTED_KEY: [c for c in message.info[INTERRUPTED_KEY] if c != part["callID"]]}
    if not info[INTERRUPTED_KEY]:
        del info[INTERRUPTED_KEY]
    message_service.message_save(session=session, info=info)


def recover(session_id: str, *, go_on: bool = True) -> None:
    """Close what a dead runner left open. With `go_on` (a worker's death), a step with nothing waiting on the
    user is made ready to go on (`_cut_step`); otherwise, and for child sessions and calls that wait on the
    user, its assistant messages end with MessageAbortedError, their streaming parts are closed, and the calls
    that still waited on the user are noted for a later resume."""
    session = session_row(session_id)
    if session is None:
        return
    # The model calls a dead worker had in flight here (its children's too: they ran inline) end as aborted.
    metering.end_dead_calls(session)
    for message in message_service.unfinished_answers(session_id):
        if go_on and session.parent_id is None and _cut_step(session, message):
            continue
        now = now_ms()
        closed_calls = []
        for part in parts_of(message.id):
            closed = parts.close_part(part.data, now)
            if closed is not None:
                message_service.part_save(session=session, part=closed)
                if closed.get("type") == "tool":
                    closed_calls.append(closed.get("callID"))
        info = {**message.info, "error": parts.ABORTED, "time": {**(message.info.get("time") or {}), "completed": now}}
        waiting = waiting_calls(session_id, closed_calls)  # their requests stay answerable
        if waiting:
            info[INTERRUPTED_KEY] = waiting
        message_service.message_save(session=session, info=info)


def _cut_step(session: Session, message: Message) -> bool:
    """A step cut by its worker's death, readied for the turn to go on: False when a call waits on the user
    (the resume above handles that). Calls that finished keep their results; a running call ends as
    interrupted; a call whose input was still streaming never ran and goes. A step left with no call was
    a model call in flight: it is removed, to be made again."""
    stored = parts_of(message.id)
    calls = [p.data.get("callID") for p in stored if p.data.get("type") == "tool"]
    if waiting_calls(session.id, calls):
        return False
    now, kept_call = now_ms(), False
    for part in stored:
        data = part.data
        state = data.get("state") or {}
        if data.get("type") == "tool" and state.get("status") == "pending":
            message_service.part_remove(session=session, message_id=message.id, part_id=data["id"])
            continue
        if data.get("type") == "tool":
            kept_call = True
            if state.get("status") == "running":
                start = (state.get("time") or {}).get("start", now)
                data = {**data, "state": {"status": "error", "input": state.get("input") or {},
                                          "error": CALL_INTERRUPTED,
                                          "metadata": {**(state.get("metadata") or {}), "interrupted": True},
                                          "time": {"start": start, "end": now}}}
                message_service.part_save(session=session, part=data)
                continue
        closed = parts.close_part(data, now)
        if closed is not None:
            message_service.part_save(session=session, part=closed)
    if not kept_call:
        message_service.message_remove(session=session, message_id=message.id)
        return True
    info = {**message.info, "finish": "tool-calls", CONTINUES_KEY: True,
            "time": {**(message.info.get("time") or {}), "completed": now}}
    message_service.message_save(session=session, info=info)
    return True


def cut_turn(session_id: str) -> Message | None:
    """The user message of a turn its worker's death cut between two steps (or whose cut step was readied
    by recover), if the session's newest assistant message is such a step."""
    last = latest_assistant(session_id)
    if last is None or not last.info.get(CONTINUES_KEY) or last.info.get("error"):
        return None
    if not (last.info.get("time") or {}).get("completed"):
        return None
    return message_service.user_message(session_id, last.info.get("parentID"))


def turn_ended(session: Session, info: dict) -> None:
    """The step a turn meant to go on after was its last after all (an abort between two steps)."""
    if info.pop(CONTINUES_KEY, None):
        message_service.message_save(session=session, info=info)


async def continue_cut_turn(scope: RunScope, turns: Turns) -> bool:
    """Go on with a turn cut by a worker's death, from its last completed step. True when it did something
    (the caller looks again); the outcome's abort clean-up is the caller's."""
    user = await db(cut_turn)(scope.session_id)
    if user is None:
        return False
    if await turns.answer(scope, user, resumed=True):
        await scope.abort_queue()
        scope.abort_event.clear()
    return True


async def resume_interrupted(scope: RunScope, turns: Turns) -> bool:
    """Re-run one interrupted call whose request was answered, then carry on the turn. True when it did
    something (the caller looks again); the outcome's abort clean-up is the caller's."""
    found = await db(resumable)(scope.session_id)
    if found is None:
        return False
    user, interrupted, part = found
    session = scope.session
    await db(_forget_call)(session, interrupted, part)
    turn = await scope.begin_turn(user)
    await scope.set_status(BUSY)
    info = await scope.open_assistant(user, turn.agent["name"], user.info.get("model") or {})
    processor = scope.new_step(turn, info, messages=[], tools=turn.tools,
                               run_child=child_runner(scope, turn, turns))
    state = part.get("state") or {}
    outcome = await scope.run_calls(processor, [(part["callID"], part.get("tool") or "", state.get("input") or {})])
    aborted = outcome == "aborted"
    if outcome == "continue":
        aborted = await turns.answer(scope, user, resumed=True)
    if aborted:
        await scope.abort_queue()
        scope.abort_event.clear()
    return True
