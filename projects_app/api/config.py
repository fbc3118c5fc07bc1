"""config.get / config.update on both mounts, and global.config.get / global.config.update (the user's global
layer). Responses are always redacted: secrets are write-only."""
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import AnyObject, ApiView, V2RequestView, expected, ref, takes
from projects_app.config import (
    config_update,
    effective_config,
    global_config_get,
    global_config_update,
    redact,
)

CONFIG = AnyObject("a JSON object (a Config)")


def unwrapped_config(body):
    """The customer's spec sends `{config: Config}`; 1.18 sends the bare Config. Config has no `config` key,
    so an object holding only that key is the spec's envelope."""
    if isinstance(body, dict) and set(body) == {"config"}:
        if not isinstance(body["config"], dict):
            message = expected("a JSON object (a Config)", body["config"])
            raise BadRequest(f"config: {message}", kind="Body", issues=[{"path": ["config"], "message": message}])
        return body["config"]
    return body


class ConfigView(ApiView):
    operation_ids = {"GET": "config.get", "PATCH": "config.update"}
    mounts = {"original": "config"}

    @takes(directory=True)
    def get(self, request):
        return Response(redact(effective_config(self.context(request))))

    @takes(CONFIG, directory=True)
    def patch(self, request):
        patch = self.body(request)
        return Response(redact(config_update(context=self.context(request), patch=patch)))


class V2ConfigView(V2RequestView, ConfigView):
    operation_ids = {"GET": "config.get", "PATCH": "config.update"}
    mounts = {"v2": "config"}
    answer_schemas = {"GET": ref("Config"), "PATCH": ref("Config")}

    @takes(CONFIG, prepare=lambda view, body: unwrapped_config(body), directory=True)
    def patch(self, request):
        patch = self.body(request)
        return Response(redact(config_update(context=self.context(request), patch=patch)))


class GlobalConfigView(ApiView):
    operation_ids = {"GET": "global.config.get", "PATCH": "global.config.update"}
    mounts = {"original": "global/config"}

    def get(self, request):
        return Response(redact(global_config_get(user=request.user)))

    @takes(CONFIG)
    def patch(self, request):
        patch = self.body(request)
        return Response(redact(global_config_update(user=request.user, patch=patch)))
