"""The turn: answering one user message. Prepares the turn (runtime/turn_setup.py), hands a compaction
request or the message's subtasks to their modules, then runs the step loop — one assistant message per
model call — until the model stops, the step limit ends it, or the session is aborted."""
from __future__ import annotations

import asyncio
import contextvars
import logging

from agentserver.db import read_once
from agentserver.errors import ApiError
from agentserver.workers.loop import db
from sessions_app.models import Message, Session
from sessions_app.runtime import compaction, parts, subtasks, turn_slots
from sessions_app.runtime.history import MAX_STEPS_TEXT, provider_messages
from sessions_app.runtime.resume import CONTINUES_KEY, turn_ended
from sessions_app.runtime.scope import RunScope
from sessions_app.runtime.step_policy import StepPolicy, step_policy
from sessions_app.runtime.turn_setup import Turn
from sessions_app.store import messages as message_service
from sessions_app.store.leases import BUSY

log = logging.getLogger(__name__)


class Turns:
    """What answers a user message. Subtasks (a child session's prompt) and resume (the turn after a re-run
    call) are handed this object: they run the same loop, and this module imports them."""

    async def answer(self, scope: RunScope, user: Message, *, resumed: bool = False) -> bool:
        """Run the loop for one user message until the model stops. True when it was aborted. `resumed`: the
        turn goes on after a re-run interrupted call (runtime/resume.py), straight to the model. The turn
        first takes one of its owner's slots (runtime/turn_slots.py) when the server caps them."""
        async with turn_slots.turn_slot(scope) as admitted:
            if not admitted:
                return True
            return await _answer(self, scope, user, resumed=resumed)


TURNS = Turns()


async def _answer(turns: Turns, scope: RunScope, user: Message, *, resumed: bool) -> bool:
    try:
        turn = await scope.begin_turn(user)
    except Exception as error:
        await _answer_with_error(scope, user, error)
        return False
    if not resumed:
        request = await db(compaction.compaction_part)(user.id)
        if request is not None:
            return await compaction.compact(scope, user, turn, request)
        if await subtasks.run_subtasks(scope, user, turn, turns):
            return True
        user = await subtasks.continue_after_subtasks(scope, user)
    step_number, last_info = (1 if resumed else 0), None
    while True:
        step_number += 1
        if scope.abort_event.is_set():
            if last_info is not None:
                await db(turn_ended)(scope.session, last_info)
            return True
        with read_once.unit():  # each step reads the organization's policy afresh, once
            allowed, pairs = await db(_step_inputs)(scope.session, turn, user)
            if allowed.refusal is not None:
                if last_info is not None:
                    await db(turn_ended)(scope.session, last_info)
                await _answer_with_error(scope, user, allowed.refusal)
                return False
            outcome, overflow, last_info = await _one_step(turns, scope, user, turn, step_number, allowed, pairs)
        if outcome == "aborted":
            return True
        if overflow or outcome != "continue":
            return False


def _step_inputs(session: Session, turn: Turn, user: Message) -> tuple[StepPolicy, list]:
    """(Synchronous, one call on the runner's thread.) What a step starts from: the organization's policy as
    it is now, and, unless the policy refuses the step, the history the model sees."""
    allowed = step_policy(owner_id=session.owner_id, tools=turn.tools, max_steps=turn.max_steps,
                          model=user.info.get("model") or {})
    return allowed, [] if allowed.refusal is not None else compaction.context_messages(session)


async def _one_step(turns: Turns, scope: RunScope, user: Message, turn: Turn, step_number: int,
                    allowed: StepPolicy, pairs: list) -> tuple[str, bool, dict]:
    await scope.set_status(BUSY)
    history = provider_messages(pairs, upto_user_id=user.id)
    last_step = step_number >= allowed.max_steps
    if last_step:
        history.append({"role": "user", "content": [{"type": "text", "text": MAX_STEPS_TEXT}]})
    info = await scope.open_assistant(user, turn.agent["name"], user.info.get("model") or {})
    if step_number == 1:
        await _first_step(scope, user, turn)
    await scope.set_status(BUSY)
    processor = scope.new_step(turn, info, messages=history, tools={} if last_step else allowed.tools,
                               user_info=user.info, temperature=turn.agent.get("temperature"),
                               run_child=subtasks.child_runner(scope, turn, turns))
    outcome = await scope.run_step(processor)
    overflow = outcome != "aborted" and await compaction.auto_compact(scope, user, turn, info)
    if outcome == "continue" and not overflow:
        info[CONTINUES_KEY] = True  # until the next step opens: a worker's death here cuts the turn (resume.py)
    await scope.close_assistant(info)
    return outcome, overflow, info


async def _first_step(scope: RunScope, user: Message, turn: Turn) -> None:
    """The session's title is generated beside the first step; the user message gets its summary stub."""
    from sessions_app.runtime.title import generate_title

    session, model = scope.session, user.info.get("model") or {}
    if session.parent_id is None:
        # A context of its own: the runner's (its thread for database calls, agentserver.workers.loop.db) ends
        # with the turn, which a slow title outlives; in it the title's call could not be counted when it ended.
        asyncio.get_running_loop().create_task(generate_title(
            session_id=session.id, context=turn.context, config=turn.config,
            model=(model.get("providerID"), model.get("modelID"))), context=contextvars.Context())
    if "summary" not in user.info:
        user.info = {**user.info, "summary": {"diffs": []}}
        await db(message_service.message_save)(session=session, info=user.info)


async def _answer_with_error(scope: RunScope, user: Message, error: Exception) -> None:
    """A turn that cannot start (unknown agent, broken config...) or go on (its model no longer allowed by the
    organization's policy) is answered by an errored message."""
    if isinstance(error, ApiError):
        message = error.message
    else:
        message = f"{type(error).__name__}: {error}"
        log.exception("preparing the turn of %s", scope.session_id)
    info = scope.assistant_info(user, user.info.get("agent") or "build", user.info.get("model") or {})
    info = parts.completed(info, error=parts.unknown_error(message))
    await db(message_service.message_save)(session=scope.session, info=info)
    message_service.publish_for(scope.session, "session.error", {"sessionID": scope.session_id,
                                                                 "error": info["error"]})
