"""Prompting use cases: store the user message (committed before anything runs), make sure a runner
answers it, optionally wait for the answer; abort; wait for idle (reference §5.2, §5.3)."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from agentserver.clock import now_ms
from policy_app.config_layer import check_tools
from policy_app.selectors import policy_for
from sessions_app.models import Message, Part, Session
from sessions_app.runtime import leases, supervisor, waiting
from sessions_app.runtime.prompt_input import resolve_parts
from sessions_app.runtime.turn_setup import load_config, session_context
from sessions_app.services.model_choice import choose_model, session_choice
from sessions_app.services.revert import (
    do_revert_finalize,
    revert_summarize,
    reverted_message_ids,
)
from sessions_app.store import messages as message_service
from sessions_app.store.messages import NO_REPLY_KEY
from sessions_app.store.rows import parts_of
from sessions_app.wire import part_wire
from usage_app.budgets import check_prompt_allowed


@dataclass(frozen=True)
class CheckedPrompt:
    """A prompt everything has been checked for: what storing it writes."""
    session: Session
    info: dict
    parts: list[dict]
    session_fields: dict


def check_prompt(*, session: Session, body: dict, no_reply: bool = False) -> CheckedPrompt:
    """Everything that can refuse a prompt, changing nothing: the message id, the agent, the model (chosen
    as if a staged revert were final), the parts (files readable and within the roots), a usage budget
    that is spent (429)."""
    from sessions_app.runtime.agents import agent_get, default_agent_name

    message_service.check_new_message_id(session=session, message_id=body.get("messageID"))
    if not no_reply:
        check_prompt_allowed(person_id=session.owner_id, session_id=session.id)
    context = session_context(session)
    config = load_config(context)
    agent_name = body.get("agent") or default_agent_name(config)
    agent = agent_get(config, agent_name)
    model = choose_model(context=context, config=config, session=session, agent=agent, requested=body.get("model"),
                         ignoring=reverted_message_ids(session))
    message_id = body.get("messageID") or message_service.new_message_id(session)
    info: dict = {"id": message_id, "sessionID": session.id, "role": "user", "time": {"created": now_ms()},
                  "agent": agent_name, "model": model}
    if body.get("system"):
        info["system"] = body["system"]
    if body.get("tools"):
        info["tools"] = body["tools"]
    if no_reply:
        info[NO_REPLY_KEY] = True
    parts = resolve_parts(context=context, message_id=message_id, session_id=session.id, parts=body["parts"])
    fields: dict = {"agent": agent_name, "model": {"id": model["modelID"], "providerID": model["providerID"],
                                                   "variant": body.get("variant") or "default"}}
    if body.get("tools"):
        check_tools(body["tools"], policy_for(context.user))
        fields["permission"] = tools_as_session_rules(session.permission, body["tools"])
    return CheckedPrompt(session=session, info=info, parts=parts, session_fields=fields)


def do_prompt_store(prompt: CheckedPrompt) -> Message:
    """Store a checked prompt in one transaction, its events published on commit: a staged revert made final
    (reference §5.7), the user message and its parts, the session's agent and model."""
    from sessions_app.store.sessions import session_set

    session = prompt.session
    with transaction.atomic():
        finalized = do_revert_finalize(session=session)
        message_service.session_touch(session=session)
        message = message_service.message_save(session=session, info=prompt.info)
        for part in prompt.parts:
            message_service.part_save(session=session, part=part)
        session_set(session=session, **prompt.session_fields)
    if finalized:
        revert_summarize(session=session)
    return message


def prompt_store(*, session: Session, body: dict, no_reply: bool = False) -> tuple[Message, list[dict]]:
    """Check, then store the user message and its parts (events: session.updated, message.updated,
    message.part.updated ×n, session.updated). A refused prompt stores nothing and leaves a staged revert
    staged. A retry of a prompt already stored (its `messageID` names a user message of this session: the
    client's first POST reached a host that stored it and then died, or its answer was lost) stores nothing
    again and is answered as the first was."""
    retried = stored_prompt(session=session, message_id=body.get("messageID"))
    if retried is not None:
        return retried, [part_wire(part) for part in parts_of(retried.id)]
    checked = check_prompt(session=session, body=body, no_reply=no_reply)
    return do_prompt_store(checked), checked.parts


def stored_prompt(*, session: Session, message_id: str | None) -> Message | None:
    """The user message of this session a client-chosen id names, if it is stored already."""
    if not message_id:
        return None
    return message_service.user_message(session.id, message_id)


def tools_as_session_rules(existing, tools: dict) -> list[dict]:
    """A prompt's `tools: {"bash": false}` becomes session permission rules, as opencode 1.18 does
    (`{permission: tool, pattern: "*", action: allow|deny}`), so it holds for later prompts too. 1.18
    replaces the session's rules with these; we merge instead (newer opencode's Permission.merge): a rule
    for the same permission and pattern is replaced, others (e.g. a child session's task denial) stay. For
    a session without rules the result is exactly 1.18's list."""
    from sessions_app.services.permissions import clean_rules

    new = [{"permission": tool, "pattern": "*", "action": "allow" if enabled else "deny"}
           for tool, enabled in tools.items()]
    keys = {(r["permission"], r["pattern"]) for r in new}
    return [r for r in clean_rules(existing) if (r["permission"], r["pattern"]) not in keys] + new


def user_message_wire(message: Message, parts: list[dict]) -> dict:
    info = {k: v for k, v in message.info.items() if not k.startswith("_")}
    return {"info": info, "parts": parts}


def prompt_async(*, session: Session, body: dict) -> Message:
    message, _ = prompt_store(session=session, body=body)
    supervisor.kick(session.id)
    return message


def prompt(*, session: Session, body: dict) -> tuple[Message, list]:
    """session.prompt: the last assistant message answering this prompt (or the user message for noReply)."""
    if body.get("noReply"):
        message, parts = prompt_store(session=session, body=body, no_reply=True)
        return message, parts
    message, _ = prompt_store(session=session, body=body)
    supervisor.kick(session.id)
    return waiting.wait_for_answer(session.id, message.id)


def prompt_v2(*, session: Session, prompt_body: dict, delivery: str = "immediate") -> tuple[Message, list[dict]]:
    """v2 session.prompt: `immediate` runs (or queues behind the running turn) now; `deferred` only stores
    the message, answered in order the next time the session runs. What the prompt does not name (agent,
    model) is the session's, as created or switched (session.switchAgent, session.switchModel)."""
    choice = session_choice(session)
    prompt_body = {**prompt_body, **{key: value for key, value in choice.items() if not prompt_body.get(key)}}
    message, parts = prompt_store(session=session, body=prompt_body)
    if delivery == "immediate" or leases.is_live(session.id):
        supervisor.kick(session.id)
    return message, parts


def session_abort(*, session: Session) -> bool:
    """Reject the session's pending questions and permission requests, then stop its runner wherever it runs."""
    from sessions_app.services.permissions import reject_pending
    from sessions_app.services.questions import reject_pending_questions
    from sessions_app.services.shell import shell_abort

    reject_pending(session=session)
    reject_pending_questions(session=session)
    shell_abort(session.id)
    supervisor.abort(session.id)
    return True


def session_wait(*, session: Session) -> tuple[Message, list[Part]] | None:
    """Block until the session is idle; its last message then (None for an empty session)."""
    waiting.wait_idle(session.id)
    message = message_service.newest_message(session.id)
    if message is None:
        return None
    return message, parts_of(message.id)
