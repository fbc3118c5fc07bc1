"""Compaction (reference §5.10): summaries that replace the history, their automatic trigger, and the
pruning of old tool outputs. Plain functions over the RunScope the runner hands them (runtime/scope.py).

A user message holding a `compaction` part is answered by a summary: an assistant message with mode/agent
"compaction", `summary: true`, no tools, the compaction agent's prompt, and the conversation so far as history.
Once that summary completed, history sent to the model starts at the compaction message
(selectors.session_context_messages). A finished step whose tokens reach the usable context (context − max
output) queues an automatic compaction, and after it a synthetic "continue" user message.

Messages the runner adds on its own carry `_continues: <the user message they carry on from>` (server-side
only), so a caller waiting for the answer to the original prompt follows them to the final answer."""
from __future__ import annotations

import logging

from agentserver import ids
from agentserver.clock import now_ms
from agentserver.workers.loop import db
from sessions_app.models import Message, Part, Session
from sessions_app.runtime import parts
from sessions_app.runtime.history import provider_messages
from sessions_app.runtime.scope import RunScope
from sessions_app.store import messages as message_service
from sessions_app.store.leases import BUSY
from sessions_app.store.rows import session_row

log = logging.getLogger(__name__)
CONTINUES_KEY = "_continues"
COMPACTION_PROMPT = (
    "Provide a detailed summary of our conversation above, written so that another agent can read it and "
    "continue the work. Include what was done, what is being done now, which files are involved and what "
    "comes next. Do not call any tools; answer with the summary text only.\n\n"
    "Use this structure:\n---\n## Goal\n\n## Instructions\n\n## Discoveries\n\n## Accomplished\n\n"
    "## Relevant files / directories\n---"
)
CONTINUE_TEXT = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."


def compaction_part(message_id: str) -> dict | None:
    return message_service.compaction_part_of(message_id)


def user_message(*, session: Session, like: Message, continues: str, parts: list[dict]) -> Message:
    """A user message the runner adds itself (same agent and model as `like`)."""
    from django.db import transaction

    message_id = message_service.new_message_id(session)
    info = {"id": message_id, "sessionID": session.id, "role": "user", "time": {"created": now_ms()},
            "agent": like.info.get("agent") or "build", "model": like.info.get("model") or {},
            CONTINUES_KEY: continues}
    with transaction.atomic():
        message = message_service.message_save(session=session, info=info)
        for part in parts:
            message_service.part_save(session=session, part={"id": ids.ascending("prt"), "sessionID": session.id,
                                                             "messageID": message_id, **part})
    return message


def continuation_of(session_id: str, message_id: str) -> str | None:
    """The user message the runner added to carry on from `message_id`, if any."""
    for mid, info in message_service.user_infos_after(session_id, message_id):
        if (info or {}).get(CONTINUES_KEY) == message_id:
            return mid
    return None


def usable_context(limit: dict) -> int:
    context = limit.get("context") or 0
    if limit.get("input"):
        return max(int(limit["input"]) - 20_000, 0)
    return max(int(context) - int(limit.get("output") or 0), 0) if context else 0


def overflowed(tokens: dict, limit: dict) -> bool:
    usable = usable_context(limit)
    if usable <= 0:
        return False
    cache = tokens.get("cache") or {}
    count = tokens.get("total") or sum(int(tokens.get(k) or 0) for k in ("input", "output")) + \
        int(cache.get("read") or 0) + int(cache.get("write") or 0)
    return count >= usable


def _model_limit(context, config: dict, model: dict) -> dict:
    from providers_app import models_catalog

    try:
        info = models_catalog.resolve_model(context=context, provider_id=model.get("providerID") or "",
                                            model_id=model.get("modelID") or "", config=config)
    except Exception:
        return {}
    return info.limit


def _set_compacting(session: Session, value: int | None) -> None:
    from sessions_app.store.sessions import session_set

    session_set(session=session, touch=False, time_compacting=value)


def context_messages(session: Session) -> list:
    """(message, parts) pairs of the history the model sees: from the last completed summary on."""
    from sessions_app.selectors import session_context_messages

    return session_context_messages(session=session)


async def compact(scope: RunScope, user: Message, turn, part: dict) -> bool:
    """Answer a compaction request with a summary. True when aborted."""
    from sessions_app.runtime.agents import agent_get

    session = scope.session
    agent = agent_get(turn.config, "compaction")
    model = agent.get("model") or user.info.get("model") or {}
    await scope.set_status(BUSY)
    await db(_set_compacting)(session, now_ms())
    pairs = await db(context_messages)(session)
    history = provider_messages(pairs, upto_user_id=user.id)
    ask = {"type": "text", "text": COMPACTION_PROMPT}
    if history and history[-1]["role"] == "user":
        history[-1] = {**history[-1], "content": [*history[-1]["content"], ask]}
    else:
        history.append({"role": "user", "content": [ask]})
    info = await scope.open_assistant(user, "compaction", model, summary=True)
    processor = scope.new_step(turn, info, messages=history, tools={}, agent=agent,
                               system=[agent.get("prompt") or COMPACTION_PROMPT])
    try:
        outcome = await scope.run_step(processor)
    finally:
        await db(_set_compacting)(session, None)
    done = outcome != "aborted" and not info.get("error")
    if done and part.get("auto"):
        # Queued before the summary completes, so a waiting caller always finds it.
        await db(user_message)(session=session, like=user, continues=user.id, parts=[
            {"type": "text", "text": CONTINUE_TEXT, "synthetic": True,
             "time": {"start": now_ms(), "end": now_ms()}}])
    await scope.close_assistant(info)
    if done:
        message_service.publish_for(session, "session.compacted", {"sessionID": session.id})
    return outcome == "aborted"


async def auto_compact(scope: RunScope, user: Message, turn, info: dict) -> bool:
    """After a finished step: queue an automatic compaction when its tokens fill the usable context."""
    if (turn.config.get("compaction") or {}).get("auto") is False or info.get("error"):
        return False
    model = {"providerID": info.get("providerID"), "modelID": info.get("modelID")}
    limit = await db(_model_limit)(turn.context, turn.config, model)
    if not overflowed(info.get("tokens") or {}, limit):
        return False
    await db(user_message)(session=scope.session, like=user, continues=user.id,
                           parts=[{"type": "compaction", "auto": True}])
    return True


# ---- prune (reference §5.10) ------------------------------------------------------------------------
PRUNE_MINIMUM = 20_000
PRUNE_PROTECT = 40_000
PRUNE_PROTECTED_TOOLS = ("skill",)


def estimate_tokens(text: str) -> int:
    return max(0, round(len(text or "") / 4))


def prune(session_id: str, config: dict | None = None) -> int:
    """After a loop: walking back from the newest message, past the last two user turns, keep the newest
    PRUNE_PROTECT tokens of tool output and mark older completed outputs `time.compacted` (history then sends
    a placeholder), if that frees more than PRUNE_MINIMUM tokens. Stops at a summary or an earlier prune.
    Returns how many parts were pruned."""
    if ((config or {}).get("compaction") or {}).get("prune") is False:
        return 0
    messages = message_service.newest_first_infos(session_id)
    users = [message_id for message_id, role, _ in messages if role == "user"]
    if len(users) < 2:
        return 0  # nothing lies past the last two user turns: no part to load
    parts_by_message: dict[str, list[Part]] = {}
    for part in message_service.tool_parts_up_to(session_id, users[1]):
        parts_by_message.setdefault(part.message_id, []).append(part)
    total = pruned = turns = 0
    chosen: list[Part] = []
    for message_id, role, info in messages:
        if role == "user":
            turns += 1
        if turns < 2:
            continue
        if role == "assistant" and (info or {}).get("summary"):
            break
        stop = False
        for part in reversed(parts_by_message.get(message_id, [])):
            state = part.data.get("state") or {}
            if state.get("status") != "completed" or part.data.get("tool") in PRUNE_PROTECTED_TOOLS:
                continue
            if (state.get("time") or {}).get("compacted"):
                stop = True
                break
            estimate = estimate_tokens(state.get("output") or "")
            total += estimate
            if total > PRUNE_PROTECT:
                pruned += estimate
                chosen.append(part)
        if stop:
            break
    if pruned <= PRUNE_MINIMUM:
        return 0
    session = session_row(session_id)
    if session is None:
        return 0
    now = now_ms()
    for part in chosen:
        message_service.part_save(session=session, part=parts.tool_pruned(part.data, now))
    return len(chosen)


def prune_quietly(session_id: str, config: dict | None = None) -> None:
    """`config`: the effective config of the turn that just ran, when there was one."""
    from sessions_app.runtime.turn_setup import load_config, session_context

    try:
        if config is None:
            session = session_row(session_id)
            if session is None:
                return
            config = load_config(session_context(session))
        prune(session_id, config)
    except Exception:
        log.exception("pruning %s", session_id)
