"""Commands and skills: command.list, app.skills, session.command, session.init, session.summarize, and the
v2 command.list, skill.list and session.compact. Thin: parse, call services/commands, render."""
from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    ApiView,
    IdField,
    StrictBooleanField,
    StrictCharField,
    V2RequestView,
    succeeds_with,
    takes,
)
from sessions_app.api.sessions import session_from_path
from sessions_app.runtime.agents import parse_model
from sessions_app.services import commands
from sessions_app.wire import message_wire

V2_COMMAND_FIELDS = ("name", "template", "description", "agent", "subtask")


class CommandBody(serializers.Serializer):
    command = StrictCharField(max_length=200)
    arguments = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    agent = StrictCharField(required=False, max_length=200)
    model = StrictCharField(required=False, allow_blank=True, max_length=400)
    messageID = IdField("msg", required=False)
    variant = StrictCharField(required=False, allow_blank=True)
    parts = serializers.ListField(child=serializers.DictField(), required=False, max_length=100)

    def validate_parts(self, parts):
        for index, part in enumerate(parts):
            if part.get("type") != "file" or not all(isinstance(part.get(k), str) for k in ("mime", "url")):
                raise serializers.ValidationError(f"parts[{index}] must be a file part with mime and url")
            if "id" in part and not (isinstance(part["id"], str) and part["id"].startswith("prt")):
                raise serializers.ValidationError(f"parts[{index}].id must start with 'prt'")
        return [dict(p) for p in parts]


class InitBody(serializers.Serializer):
    modelID = StrictCharField(max_length=400)
    providerID = StrictCharField(max_length=400)
    messageID = IdField("msg")


class SummarizeBody(serializers.Serializer):
    providerID = StrictCharField(max_length=400)
    modelID = StrictCharField(max_length=400)
    auto = StrictBooleanField(required=False, default=False)


def _v2_command(command: dict) -> dict:
    out = {k: command[k] for k in V2_COMMAND_FIELDS if k in command}
    model = parse_model(command.get("model"))
    if model:
        out["model"] = {"id": model["modelID"], "providerID": model["providerID"]}  # a ModelRef
    return out


class CommandListView(ApiView):
    operation_ids = {"GET": "command.list"}
    mounts = {"original": "command"}

    @takes(directory=True)
    def get(self, request):
        return Response(commands.command_list(context=self.context(request)))


class SessionCommandView(ApiView):
    operation_ids = {"POST": "session.command"}
    mounts = {"original": "session/<str:sessionID>/command"}
    answers = (429,)  # a usage budget is spent (usage_app.budgets)

    @takes(CommandBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        message, parts = commands.session_command(
            session=session, command=body["command"], arguments=body["arguments"], agent=body.get("agent"),
            model=body.get("model"), message_id=body.get("messageID"), parts=body.get("parts") or [])
        return Response(message_wire(message, parts))


class SessionInitView(ApiView):
    operation_ids = {"POST": "session.init"}
    mounts = {"original": "session/<str:sessionID>/init"}
    answers = (429,)  # a usage budget is spent (usage_app.budgets)

    @takes(InitBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        return Response(commands.session_init(session=session, provider_id=body["providerID"],
                                              model_id=body["modelID"], message_id=body["messageID"]))


class SessionSummarizeView(ApiView):
    operation_ids = {"POST": "session.summarize"}
    mounts = {"original": "session/<str:sessionID>/summarize"}
    answers = (429,)  # a usage budget is spent (usage_app.budgets)

    @takes(SummarizeBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        return Response(commands.session_summarize(session=session, provider_id=body["providerID"],
                                                   model_id=body["modelID"], auto=body["auto"]))


class V2CommandListView(V2RequestView):
    operation_ids = {"GET": "command.list"}
    mounts = {"v2": "command"}

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        return Response({"location": context.location(),
                         "data": [_v2_command(c) for c in commands.command_list(context=context)]})


class SkillListView(ApiView):
    operation_ids = {"GET": "app.skills"}
    mounts = {"original": "skill"}

    @takes(directory=True)
    def get(self, request):
        return Response(commands.skill_list(context=self.context(request)))


class V2SkillListView(V2RequestView):
    operation_ids = {"GET": "skill.list"}
    mounts = {"v2": "skill"}

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        return Response({"location": context.location(), "data": commands.skill_list(context=context)})


class V2CompactView(ApiView):
    operation_ids = {"POST": "session.compact"}
    mounts = {"v2": "session/<str:sessionID>/compact"}
    answers = (429,)  # a usage budget is spent (usage_app.budgets)

    @succeeds_with(204)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        commands.session_compact(session=session)
        return Response(status=204)
