"""app.log: a client's log line goes to the server's log, tagged with who sent it."""
import logging

from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import ApiView, StrictCharField, takes

client_log = logging.getLogger("agentserver.client")
LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


class LogBody(serializers.Serializer):
    service = StrictCharField(max_length=200)
    level = serializers.ChoiceField(choices=list(LOG_LEVELS))
    message = StrictCharField(max_length=100_000, allow_blank=True)
    extra = serializers.DictField(required=False)


class LogView(ApiView):
    operation_ids = {"POST": "app.log"}
    mounts = {"original": "log"}

    @takes(LogBody)
    def post(self, request):
        body = self.body(request)
        # One line per entry: a client's newlines must not forge further lines of the server's log.
        message = body["message"].replace("\r", "\\r").replace("\n", "\\n")
        client_log.log(LOG_LEVELS[body["level"]], "[%s] %s: %s%s", request.user.get_username(),
                       body["service"].replace("\n", " "), message, f" {body['extra']!r}" if body.get("extra") else "")
        return Response(True)
