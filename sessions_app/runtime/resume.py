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
marks its request `used` when it reads an allowing answer (services/permissions, services/questions); a
request still `pending` or `replied` (answered, unseen) at recovery means the tool never ran."""
from __future__ import annotations

from typing import TYPE_CHECKING

from sessions_app.models import Message, Part, PermissionRequest, Question

if TYPE_CHECKING:  # pragma: no cover
    from sessions_app.models import Session

INTERRUPTED_KEY = "_interrupted"
ALLOWING = ("once", "always")


def waiting_calls(session_id: str, call_ids: list[str]) -> list[str]:
    """Of these tool calls, those whose permission request or question the tool had not acted on yet."""
    out = []
    for call_id in call_ids:
        unseen = ("pending", "replied")
        if (PermissionRequest.objects.filter(session_id=session_id, tool__callID=call_id, status__in=unseen).exists()
                or Question.objects.filter(session_id=session_id, tool__callID=call_id, status__in=unseen).exists()):
            out.append(call_id)
    return out


def _call_state(session_id: str, call_id: str) -> str:
    """"pending" (still waiting for the user), "allowed" or "rejected"."""
    permissions = list(PermissionRequest.objects.filter(session_id=session_id, tool__callID=call_id)
                       .values_list("status", "reply"))
    questions = list(Question.objects.filter(session_id=session_id, tool__callID=call_id)
                     .values_list("status", flat=True))
    if any(s == "pending" for s, _ in permissions) or "pending" in questions:
        return "pending"
    if any(r not in ALLOWING for _, r in permissions) or "rejected" in questions:
        return "rejected"
    return "allowed"


def resumable(session_id: str) -> tuple[Message, Message, dict] | None:
    """(user message, interrupted assistant message, tool part) of a call to re-run now, if any."""
    last = Message.objects.filter(session_id=session_id, role="assistant").order_by("-id").first()
    if last is None or not last.info.get(INTERRUPTED_KEY):
        return None
    if (last.info.get("error") or {}).get("name") != "MessageAbortedError":
        return None
    calls = last.info[INTERRUPTED_KEY]
    for part in Part.objects.filter(message=last, type="tool").order_by("id"):
        call_id = part.data.get("callID")
        if call_id in calls and _call_state(session_id, call_id) == "allowed":
            user = Message.objects.filter(id=last.info.get("parentID"), session_id=session_id).first()
            return (user, last, part.data) if user is not None else None
    return None


def wake_if_orphaned(session_id: str) -> None:
    """After an answer (view thread): no runner waits on it → start one to resume the interrupted call."""
    from sessions_app.runtime import leases, runner

    if not leases.is_live(session_id) and resumable(session_id) is not None:
        runner.call(runner.ensure_runner, session_id)


def _forget_call(session: "Session", message: Message, part: dict) -> None:
    from sessions_app.services import messages as message_service

    message_service.part_remove(session=session, message_id=message.id, part_id=part["id"])
    info = {**message.info, INTERRUPTED_KEY: [c for c in message.info[INTERRUPTED_KEY] if c != part["callID"]]}
    if not info[INTERRUPTED_KEY]:
        del info[INTERRUPTED_KEY]
    message_service.message_save(session=session, info=info)


class ResumeMixin:
    """Runner side: `_resume_interrupted()` at the top of every runner iteration."""

    _resume_checked = False

    async def _resume_interrupted(self, woken: bool = False) -> bool:
        """Re-run one interrupted call whose request was answered, then carry on the turn. True when it
        did something (the caller looks again). Looks only when the runner starts, after a resume and when
        woken: an answer kicks a runner only while no lease is live (wake_if_orphaned), so a runner that
        is busy with other work never has anything to resume (and its idle path stays one query short)."""
        import asyncio

        from providers_app.stream import ToolCallEnd
        from sessions_app.runtime import leases
        from sessions_app.runtime.processor import now_ms
        from sessions_app.runtime.runner import _notify, db
        from sessions_app.runtime.turn import prepare_turn
        from sessions_app.services import messages as message_service

        if self._resume_checked and not woken:
            return False
        self._resume_checked = True
        found = await db(resumable)(self.session_id)
        if found is None:
            return False
        self._resume_checked = False  # look again afterwards: a second interrupted call may be answered
        user, interrupted, part = found
        session = self.session
        await db(_forget_call)(session, interrupted, part)
        turn = await db(prepare_turn)(session, user)
        self._context = turn.context
        await self.set_status(leases.BUSY, session.id)
        info = self._assistant_info(user, turn.agent["name"], user.info.get("model") or {}, session.id)
        await db(message_service.message_save)(session=session, info=info)
        processor = self._step(session, turn, info, [], turn.tools)
        state = part.get("state") or {}

        async def rerun() -> str:
            await processor._tool_call(ToolCallEnd(id=part["callID"], name=part.get("tool") or "",
                                                   input=state.get("input") or {}))
            await asyncio.gather(*processor.tool_tasks, return_exceptions=True)
            return "stop" if processor.blocked else "continue"

        outcome = await self._run_step(processor, rerun())
        if outcome != "aborted":
            info["finish"] = "tool-calls"
        info["time"]["completed"] = now_ms()
        await db(message_service.message_save)(session=session, info=dict(info))
        _notify()
        aborted = outcome == "aborted"
        if outcome == "continue":
            aborted = await self.answer(user, resumed=True)
        if aborted:
            await self._abort_queue()
            self.abort_event.clear()
        return True
