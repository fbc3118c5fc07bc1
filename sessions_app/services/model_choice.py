"""Which model answers a prompt. Shared by prompts, commands and session.shell, so it belongs to none of them
(prompting imports the shell service to abort it, and the shell service needs this)."""
from __future__ import annotations

from sessions_app.models import Message, Session


def choose_model(*, context, config: dict, session: Session, agent: dict, requested: dict | None) -> dict:
    """input → agent's model → the last user message's → config `model` → catalog default; 400 if unknown."""
    from providers_app import models_catalog

    model = requested or agent.get("model")
    if not model:
        last = (Message.objects.filter(session=session, role="user").order_by("-id")
                .values_list("info", flat=True).first())
        model = (last or {}).get("model")
    if model and model.get("providerID") and model.get("modelID"):
        provider_id, model_id = model["providerID"], model["modelID"]
    else:
        provider_id, model_id = models_catalog.default_model(context=context, config=config)
    models_catalog.resolve_model(context=context, provider_id=provider_id, model_id=model_id, config=config)
    return {"providerID": provider_id, "modelID": model_id}
