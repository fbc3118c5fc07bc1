"""Prompting: session.prompt (POST /session/{id}/message), session.prompt_async, session.abort,
session.shell, and the v2 session.prompt / session.wait / session.interrupt. Thin: parse, call
services/prompting, render.

The views are ordinary (threaded) DRF views; the runner lives on the server loop and is reached through
runtime.supervisor (agentserver.workers.loop.call), so a sync prompt blocks only its own request thread while it
waits (bounded: runtime/waiting.py)."""
from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import (
    ApiView,
    IdField,
    StrictBooleanField,
    StrictCharField,
    enveloped,
    record,
    ref,
    succeeds_with,
    takes,
)
from sessions_app.api import serializers as s
from sessions_app.api.sessions import session_from_path
from sessions_app.services import prompting
from sessions_app.services.shell import session_shell
from sessions_app.store.sessions import session_refresh
from sessions_app.wire import message_wire, session_wire_v2

PART_FIELDS = {
    "text": {"text": str},
    "file": {"mime": str, "url": str},
    "agent": {"name": str},
    "subtask": {"prompt": str, "description": str, "agent": str},
}
OPTIONAL_STR = ("filename", "id")


class ModelRef(serializers.Serializer):
    providerID = StrictCharField()
    modelID = StrictCharField()


class PromptBody(serializers.Serializer):
    messageID = IdField("msg", required=False)
    model = ModelRef(required=False)
    agent = StrictCharField(required=False)
    noReply = StrictBooleanField(required=False)
    system = StrictCharField(required=False, allow_blank=True)
    tools = serializers.DictField(child=StrictBooleanField(), required=False)
    format = serializers.DictField(required=False)
    variant = StrictCharField(required=False)
    parts = serializers.ListField(child=serializers.DictField())

    def validate_parts(self, parts):
        for index, part in enumerate(parts):
            kind = part.get("type")
            if kind not in PART_FIELDS:
                raise serializers.ValidationError(f"parts[{index}].type must be one of {sorted(PART_FIELDS)}")
            for name, expected in PART_FIELDS[kind].items():
                if not isinstance(part.get(name), expected):
                    raise serializers.ValidationError(f"parts[{index}].{name} is required (string)")
            for name in OPTIONAL_STR:
                if name in part and not isinstance(part[name], str):
                    raise serializers.ValidationError(f"parts[{index}].{name} must be a string")
            if "id" in part and not part["id"].startswith("prt"):
                raise serializers.ValidationError(f"parts[{index}].id must start with 'prt'")
        return parts


class ShellBody(serializers.Serializer):
    messageID = IdField("msg", required=False)
    agent = StrictCharField()
    command = StrictCharField()
    model = ModelRef(required=False)


class V2PromptBody(serializers.Serializer):
    prompt = PromptBody()
    delivery = serializers.ChoiceField(choices=["immediate", "deferred"], required=False, default="immediate")


def _prompt_input(body: dict) -> dict:
    """A valid PromptBody as the services take it."""
    return {**body, "model": dict(body["model"]) if body.get("model") else None,
            "parts": [dict(p) for p in body["parts"]]}


def _answer_wire(result) -> dict:
    message, parts = result
    return message_wire(message, parts)


class PromptView(ApiView):
    operation_ids = {"POST": "session.prompt"}
    mounts = {"original": "session/<str:sessionID>/message"}
    answers = (429,)  # a usage budget is spent (usage_app.budgets)
    # opencode documents an assistant message; with noReply it answers (as we do) the user message it stored.
    answer_schemas = {"POST": s.MESSAGE_WITH_PARTS}

    @takes(PromptBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = _prompt_input(self.body(request))
        result = prompting.prompt(session=session, body=body)
        if body.get("noReply"):
            return Response(prompting.user_message_wire(*result))
        return Response(_answer_wire(result))


class PromptAsyncView(ApiView):
    operation_ids = {"POST": "session.prompt_async"}
    mounts = {"original": "session/<str:sessionID>/prompt_async"}
    answers = (429,)  # a usage budget is spent (usage_app.budgets)

    @takes(PromptBody)
    @succeeds_with(204)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        prompting.prompt_async(session=session, body=_prompt_input(self.body(request)))
        return Response(status=204)


class AbortView(ApiView):
    operation_ids = {"POST": "session.abort"}
    mounts = {"original": "session/<str:sessionID>/abort"}

    def post(self, request, sessionID: str):
        return Response(prompting.session_abort(session=session_from_path(request, sessionID)))


class ShellView(ApiView):
    operation_ids = {"POST": "session.shell"}
    mounts = {"original": "session/<str:sessionID>/shell"}
    answers = (409, 503)

    @takes(ShellBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        model = dict(body["model"]) if body.get("model") else None
        return Response(_answer_wire(session_shell(session=session, agent=body["agent"], command=body["command"],
                                                   model=model, message_id=body.get("messageID"))))


class V2PromptView(ApiView):
    operation_ids = {"POST": "session.prompt"}
    mounts = {"v2": "session/<str:sessionID>/prompt"}
    answers = (429,)  # a usage budget is spent (usage_app.budgets)
    answer_schemas = {"POST": s.V2_MESSAGE}

    @takes(V2PromptBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        if not isinstance(request.data, dict) or not isinstance(request.data.get("prompt"), dict):
            raise BadRequest("Missing key prompt", kind="Body", issues=[{"path": ["prompt"], "message": "required"}])
        body = self.body(request)
        message, parts = prompting.prompt_v2(session=session, prompt_body=_prompt_input(body["prompt"]),
                                             delivery=body["delivery"])
        return Response({"data": prompting.user_message_wire(message, parts)})


class V2WaitView(ApiView):
    operation_ids = {"POST": "session.wait"}
    mounts = {"v2": "session/<str:sessionID>/wait"}
    answer_schemas = {"POST": enveloped(record({"session": ref("SessionV2Info"),
                                                    "message": {"anyOf": [s.MESSAGE_WITH_PARTS, {"type": "null"}]}}))}

    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        last = prompting.session_wait(session=session)
        session_refresh(session)
        return Response({"data": {"session": session_wire_v2(session),
                                  "message": message_wire(*last) if last else None}})


class V2SessionInterruptView(ApiView):
    operation_ids = {"POST": "session.interrupt"}
    mounts = {"v2": "session/<str:sessionID>/interrupt"}

    @succeeds_with(204)
    def post(self, request, sessionID: str):
        prompting.session_abort(session=session_from_path(request, sessionID))
        return Response(status=204)
