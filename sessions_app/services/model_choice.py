"""Which model answers a prompt. Shared by prompts, commands and session.shell, so it belongs to none of them
(prompting imports the shell service to abort it, and the shell service needs this)."""
from __future__ import annotations

from collections.abc import Collection

from sessions_app.models import Session
from sessions_app.store.messages import latest_user_info


def choose_model(*, context, config: dict, session: Session, agent: dict, requested: dict | None,
                 ignoring: Collection[str] = ()) -> dict:
    """input → agent's model → the last user message's (not one of `ignoring`, the messages a staged revert
    removes) → config `model` → catalog default; 400 if unknown."""
    from providers_app import models_catalog

    model = requested or agent.get("model")
    if not model:
        model = (latest_user_info(session.id, ignoring=ignoring) or {}).get("model")
    if model and model.get("providerID") and model.get("modelID"):
        provider_id, model_id = model["providerID"], model["modelID"]
    else:
        provider_id, model_id = models_catalog.default_model(context=context, config=config)
    check_model_allowed(user=context.user, provider_id=provider_id, model_id=model_id)
    models_catalog.resolve_model(context=context, provider_id=provider_id, model_id=model_id, config=config)
    return {"providerID": provider_id, "modelID": model_id}


def check_model_allowed(*, user, provider_id: str, model_id: str) -> None:
    """PolicyError (403, naming the policy) for a model the organization's policy does not allow: a clearer
    answer than the catalog's "Model not found" for a model it hides."""
    from policy_app.config_layer import model_refusal
    from policy_app.selectors import policy_for

    refused = policy_for(user).model_refused_by(provider_id, model_id)
    if refused:
        raise model_refusal(provider_id, model_id, refused)


def session_switch_agent(*, session: Session, agent: str) -> Session:
    """v2 session.switchAgent: the agent of the session's next v2 turns (400 for an agent its config lacks)."""
    from sessions_app.runtime.agents import agent_get
    from sessions_app.runtime.turn_setup import load_config, session_context
    from sessions_app.store.sessions import session_set

    agent_get(load_config(session_context(session)), agent)
    return session_set(session=session, agent=agent)


def session_switch_model(*, session: Session, model: dict) -> Session:
    """v2 session.switchModel: the model of the session's next v2 turns (400 for a model its context lacks)."""
    from providers_app import models_catalog
    from sessions_app.runtime.turn_setup import load_config, session_context
    from sessions_app.store.sessions import session_set

    context = session_context(session)
    check_model_allowed(user=context.user, provider_id=model["providerID"], model_id=model["id"])
    models_catalog.resolve_model(context=context, provider_id=model["providerID"], model_id=model["id"],
                                 config=load_config(context))
    chosen = {"id": model["id"], "providerID": model["providerID"], "variant": model.get("variant") or "default"}
    return session_set(session=session, model=chosen)


def session_choice(session: Session) -> dict:
    """The agent and model a v2 prompt (whose body names neither) runs with: the session's, as created or
    switched; empty when it has none yet (the defaults then apply)."""
    out: dict = {}
    if session.agent:
        out["agent"] = session.agent
    if isinstance(session.model, dict) and session.model.get("id") and session.model.get("providerID"):
        out["model"] = {"providerID": session.model["providerID"], "modelID": session.model["id"]}
        if session.model.get("variant") and session.model["variant"] != "default":
            out["variant"] = session.model["variant"]
    return out
