"""config.get / config.update on both mounts. Responses are always redacted: secrets are write-only."""
from rest_framework.response import Response

from agentserver.api import ApiView, V2RequestView
from agentserver.errors import BadRequest
from projects_app.config import config_update, effective_config, redact


class ConfigView(ApiView):
    operation_ids = {"GET": "config.get", "PATCH": "config.update"}

    def get(self, request):
        return Response(redact(effective_config(self.context(request))))

    def patch(self, request):
        if not isinstance(request.data, dict):
            raise BadRequest("Request body must be a JSON object (a Config)", kind="Body")
        return Response(redact(config_update(context=self.context(request), patch=request.data)))


class V2ConfigView(V2RequestView, ConfigView):
    operation_ids = {"GET": "config.get", "PATCH": "config.update"}

    def patch(self, request):
        body = request.data
        # The customer's spec sends `{config: Config}`; 1.18 sends the bare Config. Config has no `config` key,
        # so an object holding only that key is the spec's envelope.
        if isinstance(body, dict) and set(body) == {"config"}:
            if not isinstance(body["config"], dict):
                raise BadRequest("config: expected an object (a Config)", kind="Body",
                                 issues=[{"path": ["config"], "message": "expected object"}])
            body = body["config"]
        return Response(redact(config_update(context=self.context(request), patch=body)))
