"""Server-wide routes of opencode 1.18's clients: global.config.get/update, global.dispose, app.log, and
project.initGit. Thin views over projects_app.config, agentserver.instance and projects_app.git_init."""
import logging

from rest_framework import serializers
from rest_framework.response import Response

from agentserver.api import ApiView, StrictCharField, parse
from agentserver.errors import BadRequest
from agentserver.instance import global_dispose
from projects_app.config import global_config_get, global_config_update, redact
from projects_app.git_init import project_init_git
from projects_app.projects import project_wire

client_log = logging.getLogger("agentserver.client")
LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


class GlobalConfigView(ApiView):
    operation_ids = {"GET": "global.config.get", "PATCH": "global.config.update"}

    def get(self, request):
        return Response(redact(global_config_get(user=request.user)))

    def patch(self, request):
        if not isinstance(request.data, dict):
            raise BadRequest("Request body must be a JSON object (a Config)", kind="Body")
        return Response(redact(global_config_update(user=request.user, patch=request.data)))


class GlobalDisposeView(ApiView):
    operation_ids = {"POST": "global.dispose"}

    def post(self, request):
        return Response(global_dispose(user=request.user))


class LogBody(serializers.Serializer):
    service = StrictCharField(max_length=200)
    level = serializers.ChoiceField(choices=list(LOG_LEVELS))
    message = StrictCharField(max_length=100_000, allow_blank=True)
    extra = serializers.DictField(required=False)


class LogView(ApiView):
    """app.log: a client's log line goes to the server's log, tagged with who sent it."""

    operation_ids = {"POST": "app.log"}

    def post(self, request):
        body = parse(LogBody, request.data)
        # One line per entry: a client's newlines must not forge further lines of the server's log.
        message = body["message"].replace("\r", "\\r").replace("\n", "\\n")
        client_log.log(LOG_LEVELS[body["level"]], "[%s] %s: %s%s", request.user.get_username(),
                       body["service"].replace("\n", " "), message, f" {body['extra']!r}" if body.get("extra") else "")
        return Response(True)


class ProjectInitGitView(ApiView):
    operation_ids = {"POST": "project.initGit"}

    def post(self, request):
        return Response(project_wire(project_init_git(context=self.context(request))))
