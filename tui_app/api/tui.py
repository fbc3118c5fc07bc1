"""The /tui/* control routes of the SDK (tui_app/control.py says where each call goes)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import (
    ApiView,
    IdField,
    StrictCharField,
    StrictIntegerField,
    expected,
    id_param,
    parse,
    succeeds_with,
    takes,
)
from sessions_app.selectors import session_get
from tui_app import control

TOAST_VARIANTS = ("info", "success", "warning", "error")


class TextBody(serializers.Serializer):
    text = StrictCharField(allow_blank=True, max_length=1_000_000)


class CommandBody(serializers.Serializer):
    command = StrictCharField(max_length=200)


class ToastBody(serializers.Serializer):
    title = StrictCharField(required=False, allow_blank=True, max_length=1000)
    message = StrictCharField(allow_blank=True, max_length=10_000)
    variant = serializers.ChoiceField(choices=TOAST_VARIANTS)
    duration = StrictIntegerField(required=False, min_value=1)


class SessionBody(serializers.Serializer):
    sessionID = IdField("ses")


class PublishBody(serializers.Serializer):
    type = serializers.ChoiceField(choices=["tui.prompt.append", "tui.command.execute", "tui.toast.show",
                                            "tui.session.select"])
    properties = serializers.DictField()

    @classmethod
    def openapi_schema(cls, auto_schema, direction) -> dict:
        """One case per type, each with the properties its serializer (PUBLISH_BODIES) validates."""
        return {"oneOf": [
            {"type": "object", "required": ["type", "properties"],
             "properties": {"type": {"const": kind},
                            "properties": auto_schema.resolve_serializer(body, direction).ref}}
            for kind, body in PUBLISH_BODIES.items()]}


def _send(view: ApiView, request, event_type: str, properties: dict):
    return Response(control.tui_send(context=view.context(request), path=request.path, body=properties,
                                         event_type=event_type, properties=properties))


def _command_view(name: str, operation_id: str, command: str, mounted_at: str) -> type[ApiView]:
    @takes(directory=True)
    def post(self, request):
        return _send(self, request, "tui.command.execute", {"command": command})

    return type(name, (ApiView,), {"operation_ids": {"POST": operation_id}, "mounts": {"original": mounted_at},
                                   "post": post,
                                   "__doc__": f"Runs the TUI command {command!r} in the caller's TUIs."})


# opencode 1.18 sends "session.list" for open-themes too (a slip in its source); the theme list is meant.
OpenHelpView = _command_view("OpenHelpView", "tui.openHelp", "help.show", "tui/open-help")
OpenSessionsView = _command_view("OpenSessionsView", "tui.openSessions", "session.list", "tui/open-sessions")
OpenThemesView = _command_view("OpenThemesView", "tui.openThemes", "theme.switch", "tui/open-themes")
OpenModelsView = _command_view("OpenModelsView", "tui.openModels", "model.list", "tui/open-models")
SubmitPromptView = _command_view("SubmitPromptView", "tui.submitPrompt", "prompt.submit", "tui/submit-prompt")
ClearPromptView = _command_view("ClearPromptView", "tui.clearPrompt", "prompt.clear", "tui/clear-prompt")


class AppendPromptView(ApiView):
    operation_ids = {"POST": "tui.appendPrompt"}
    mounts = {"original": "tui/append-prompt"}

    @takes(TextBody, directory=True)
    def post(self, request):
        body = self.body(request)
        return _send(self, request, "tui.prompt.append", {"text": body["text"]})


class ExecuteCommandView(ApiView):
    operation_ids = {"POST": "tui.executeCommand"}
    mounts = {"original": "tui/execute-command"}

    @takes(CommandBody, directory=True)
    def post(self, request):
        body = self.body(request)
        return _send(self, request, "tui.command.execute", {"command": control.command_name(body["command"])})


class ShowToastView(ApiView):
    operation_ids = {"POST": "tui.showToast"}
    mounts = {"original": "tui/show-toast"}

    @takes(ToastBody, directory=True)
    def post(self, request):
        return _send(self, request, "tui.toast.show", dict(self.body(request)))


class SelectSessionView(ApiView):
    operation_ids = {"POST": "tui.selectSession"}
    mounts = {"original": "tui/select-session"}

    @takes(SessionBody, directory=True)
    def post(self, request):
        body = self.body(request)
        session = session_get(user=request.user, session_id=id_param(body["sessionID"], "ses", "session"))
        return _send(self, request, "tui.session.select", {"sessionID": session.id})


PUBLISH_BODIES = {"tui.prompt.append": TextBody, "tui.command.execute": CommandBody, "tui.toast.show": ToastBody,
                  "tui.session.select": SessionBody}


class PublishView(ApiView):
    operation_ids = {"POST": "tui.publish"}
    mounts = {"original": "tui/publish"}

    @takes(PublishBody, directory=True)
    def post(self, request):
        body = self.body(request)
        properties = dict(parse(PUBLISH_BODIES[body["type"]], body["properties"]))
        if body["type"] == "tui.session.select":
            session_get(user=request.user, session_id=id_param(properties["sessionID"], "ses", "session"))
        return _send(self, request, body["type"], properties)


class ControlNextView(ApiView):
    """Long-poll: the oldest request for the caller's control client, or 204 after the wait."""

    operation_ids = {"GET": "tui.control.next"}
    mounts = {"original": "tui/control/next"}

    @succeeds_with(200, 204)
    def get(self, request):
        item = control.control_next(user=request.user)
        return Response(item) if item is not None else Response(status=204)


class ControlResponseView(ApiView):
    operation_ids = {"POST": "tui.control.response"}
    mounts = {"original": "tui/control/response"}

    def post(self, request):
        if request.data is None:
            raise BadRequest(expected("a JSON value", None))
        return Response(control.control_response(user=request.user, body=request.data))
