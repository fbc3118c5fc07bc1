"""What one turn (the answer to one user message) runs with: the session's pinned context, its effective
config, the agent, the tools the model may call and the permission rules they are judged by; and the child
session a task call runs in. Synchronous (ORM); the runner calls these from its thread."""
from __future__ import annotations

import math
from dataclasses import dataclass

from agentserver import ids
from agentserver.context import RuntimeContext
from agentserver.db import read_once
from projects_app.contexts import context_for_directory
from agentserver.clock import now_ms
from sessions_app.models import Message, Session
from sessions_app.store.rows import owner_of, session_reload


@dataclass
class Turn:
    context: RuntimeContext
    config: dict
    agent: dict
    model: dict
    tools: dict
    rules: list[dict]
    max_steps: float
    snapshots: object | None = None    # the turn's runtime/step_snapshots.py StepSnapshots (RunScope.begin_turn)


def session_context(session: Session) -> RuntimeContext:
    return context_for_directory(owner_of(session), session.directory, workspace_id=session.workspace_id)


def load_config(context: RuntimeContext) -> dict:
    from projects_app.config import effective_config

    return effective_config(context)


def prepare_turn(session: Session, user: Message) -> Turn:
    """What the turn answering `user` works with. One unit of work (agentserver.db.read_once): the effective
    config and the MCP servers' list read the organization's policy once between them."""
    with read_once.unit():
        return _prepared_turn(session, user)


def _prepared_turn(session: Session, user: Message) -> Turn:
    from sessions_app.runtime.agents import agent_get, session_ruleset
    from sessions_app.runtime.tool_registry import tools_for

    session_reload(session)
    context = session_context(session)
    config = load_config(context)
    agent = agent_get(config, user.info.get("agent") or "build")
    model = user.info.get("model") or {}
    tools = tools_for(agent=agent, config=config, model=model, context=context, session_rules=session.permission)
    disabled = {name for name, on in (user.info.get("tools") or {}).items() if on is False}
    steps = agent.get("steps")
    return Turn(
        context=context, config=config, agent=agent, model=model,
        tools={t.id: t for t in tools if t.id not in disabled},
        rules=session_ruleset(config, agent["name"], session.permission),
        max_steps=steps if isinstance(steps, int) and steps > 0 else math.inf,
    )


def child_session_and_prompt(*, parent: Session, context: RuntimeContext, config: dict, agent: str, prompt: str,
                             description: str, task_id: str | None, parent_model: dict) -> tuple[Session, Message]:
    """The task tool's child session (new, or the one `task_id` names) and the user message it answers."""
    from sessions_app.runtime.agents import agent_get
    from sessions_app.store.messages import message_save, part_save
    from sessions_app.store.sessions import child_of, session_create

    child = None
    if task_id:
        child = child_of(parent, task_id)
    if child is None:
        child = session_create(context=context, parent_id=parent.id, title=f"{description} (@{agent} subagent)")
    agent_info = agent_get(config, agent)
    model = agent_info.get("model") or parent_model
    message_id = ids.ascending("msg")
    info = {"id": message_id, "sessionID": child.id, "role": "user", "time": {"created": now_ms()},
            "agent": agent, "model": {"providerID": model.get("providerID"), "modelID": model.get("modelID")}}
    message = message_save(session=child, info=info)
    part_save(session=child, part={"id": ids.ascending("prt"), "sessionID": child.id, "messageID": message_id,
                                   "type": "text", "text": prompt})
    return child, message
