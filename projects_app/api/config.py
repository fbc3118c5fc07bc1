"""config.get / config.update on both mounts, and global.config.get / global.config.update (the user's global
layer). Responses are always redacted: secrets are write-only."""
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import ApiView, V2RequestView, body_object, expected, ref
from projects_app.config import (
    config_update,
    effective_config,
    global_config_get,
    global_config_update,
    redact,
)


class ConfigView(ApiView):
    operation_ids = {"GET": "config.get", "PATCH": "config.update"}

    def get(self, request):
        return Response(redact(effective_config(self.context(request))))

    def patch(self, request):
        patch = body_object(request.data, "a JSON object (a Config)")
        return Response(redact(config_update(context=self.context(request), patch=patch)))


class V2ConfigView(V2RequestView, ConfigView):
    operation_ids = {"GET": "config.get", "PATCH": "config.update"}
    answer_schemas = {"GET": ref("Config"), "PATCH": ref("Config")}

    def patch(self, request):
        body = request.data
        # The customer's spec sends `{config: Config}`; 1.18 sends the bare Config. Config has no `config` key,
        # so an object holding only that key is the spec's envelope.
        if isinstance(body, dict) and set(body) == {"config"}:
            if not isinstance(body["config"], dict):
                message = expected("a JSON object (a Config)", body["config"])
                raise BadRequest(f"config: {message}", kind="Body", issues=[{"path": ["config"], "message": message}])
            body = body["config"]
        return Response(redact(config_update(context=self.context(request), patch=body)))


class GlobalConfigView(ApiView):
    operation_ids = {"GET": "global.config.get", "PATCH": "global.config.update"}

    def get(self, request):
        return Response(redact(global_config_get(user=request.user)))

    def patch(self, request):
        patch = body_object(request.data, "a JSON object (a Config)")
        return Response(redact(global_config_update(user=request.user, patch=patch)))
