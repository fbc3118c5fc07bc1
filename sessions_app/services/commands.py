"""Command use cases (reference §5.10–§5.12): list the catalogue, run a command in a session, init, summarize.
Running goes through the prompting service like any prompt; this module only builds the prompt input."""
from __future__ import annotations

from agentserver.errors import BadRequest
from sessions_app.models import Message, Part, Session
from sessions_app.runtime import supervisor, waiting
from sessions_app.runtime.turn_setup import load_config, session_context
from sessions_app.services import prompting
from sessions_app.services.model_choice import choose_model
from sessions_app.store import messages as message_service


def command_list(*, context) -> list[dict]:
    from sessions_app.runtime.commands import command_list as catalogue

    return catalogue(context=context, config=load_config(context))


def skill_list(*, context) -> list[dict]:
    from sessions_app.runtime.tools.skill import discover

    try:
        return list(discover(context).values())
    except OSError:
        return []


def _model_ref(value) -> dict | None:
    from sessions_app.runtime.agents import parse_model

    if value is None or value == "":
        return None
    model = parse_model(value)
    if model is None:
        raise BadRequest(f"Invalid model: {value!r} (expected provider/model)", kind="Body")
    return model


def command_input(*, session: Session, command: str, arguments: str, agent: str | None = None,
                  model: str | None = None, message_id: str | None = None, parts: list[dict] = ()) -> dict:
    """The prompt input a command becomes (§5.12 steps 1–7). Unknown command → session.error + 400.
    Everything that can refuse it (the command, its agents and models, the extra file parts) is checked before
    the template's `!` commands run."""
    from auth_app.tokens import roots_of
    from sessions_app.runtime.agents import agent_get, agent_list, default_agent_name
    from sessions_app.runtime.command_template import expand
    from sessions_app.runtime.commands import command_get
    from sessions_app.runtime.prompt_input import resolve_parts
    from sessions_app.services.revert import reverted_message_ids

    context = session_context(session)
    config = load_config(context)
    found = command_get(context=context, config=config, name=command)
    if found is None:
        message = f"Command not found: {command}"
        message_service.publish_for(session, "session.error", {
            "sessionID": session.id, "error": {"name": "UnknownError", "data": {"message": message}}})
        raise BadRequest(message, kind="Body")
    agent_name = found.get("agent") or agent or default_agent_name(config)
    agent_info = agent_get(config, agent_name)
    task_model = (_model_ref(found.get("model")) or agent_info.get("model") or _model_ref(model))
    subtask = found.get("subtask") is True or (agent_info.get("mode") == "subagent"
                                               and found.get("subtask") is not False)
    ignoring = reverted_message_ids(session)
    chosen = choose_model(context=context, config=config, session=session, agent=agent_info, requested=task_model,
                          ignoring=ignoring)
    if subtask:
        outer_agent = agent or default_agent_name(config)
        choose_model(context=context, config=config, session=session, agent=agent_get(config, outer_agent),
                     requested=_model_ref(model), ignoring=ignoring)
    extra = list(parts)
    # Read only to refuse a file that cannot be: the prompt reads them again with the template's parts.
    resolve_parts(context=context, message_id=message_id or "msg", session_id=session.id, parts=extra)
    parts = expand(found["template"], arguments, context=context, roots=roots_of(session.owner),
                   agent_names={a["name"] for a in agent_list(config)})
    body: dict = {"messageID": message_id}
    if subtask:
        body["parts"] = [{"type": "subtask", "agent": agent_name, "description": found.get("description") or "",
                          "command": command, "model": chosen,
                          "prompt": next((p["text"] for p in parts if p["type"] == "text"), "")}]
        body["agent"] = outer_agent
        body["model"] = _model_ref(model)
    else:
        body.update(parts=[*parts, *extra], agent=agent_name, model=task_model)
    return body


def session_command(*, session: Session, command: str, arguments: str, agent: str | None = None,
                    model: str | None = None, message_id: str | None = None,
                    parts: list[dict] = ()) -> tuple[Message, list[Part]]:
    """Run a command like a prompt (extra file `parts` follow the template's); the final assistant message.
    Publishes command.executed."""
    message_service.check_new_message_id(session=session, message_id=message_id)  # before any `!` runs
    body = command_input(session=session, command=command, arguments=arguments, agent=agent, model=model,
                         message_id=message_id, parts=parts)
    message, parts = prompting.prompt(session=session, body=body)
    message_service.publish_for(session, "command.executed", {
        "name": command, "sessionID": session.id, "arguments": arguments, "messageID": message.id})
    return message, parts


def session_init(*, session: Session, provider_id: str, model_id: str, message_id: str) -> bool:
    """The `init` command with no arguments; the project is marked initialized afterwards."""
    from agentserver.events import publisher as events
    from projects_app.projects import project_mark_initialized, project_of, project_wire

    session_command(session=session, command="init", arguments="", model=f"{provider_id}/{model_id}",
                    message_id=message_id)
    project = project_mark_initialized(project_of(session_context(session)))
    events.publish("project.updated", project_wire(project), owner_id=session.owner_id,
                   directory=session.directory, project_id=project.project_id)
    return True


def session_summarize(*, session: Session, provider_id: str, model_id: str, auto: bool = False) -> bool:
    """A user message holding one compaction part (agent of the latest user message), answered by the
    runner with a summary; returns when it is done."""
    from sessions_app.runtime.agents import default_agent_name

    last = message_service.latest_user_info(session.id) or {}
    agent = last.get("agent") or default_agent_name(load_config(session_context(session)))
    body = {"agent": agent, "model": {"providerID": provider_id, "modelID": model_id},
            "parts": [{"type": "compaction", "auto": auto}]}
    message, _ = prompting.prompt_store(session=session, body=body)
    supervisor.kick(session.id)
    waiting.wait_for_answer(session.id, message.id)
    return True


def session_compact(*, session: Session) -> bool:
    """v2 session.compact: summarize with the model the session last used (else the default one)."""
    from providers_app import models_catalog

    last = message_service.latest_user_info(session.id) or {}
    model = last.get("model") or {}
    if not (model.get("providerID") and model.get("modelID")):
        context = session_context(session)
        provider_id, model_id = models_catalog.default_model(context=context, config=load_config(context))
        model = {"providerID": provider_id, "modelID": model_id}
    return session_summarize(session=session, provider_id=model["providerID"], model_id=model["modelID"])
