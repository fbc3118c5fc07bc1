"""global.health and v2.health.get: the routes that answer anonymously (besides the public share pages)."""
from django.conf import settings
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from agentserver.sandbox import launcher as sandbox
from web_app.assets import describe as web_app


class HealthView(APIView):
    operation_ids = {"GET": "global.health"}
    mounts = {"original": "global/health"}
    # opencode's {healthy, version}, and what an operator needs to know besides: the sandbox and the web app.
    answer_schemas = {"GET": {
        "type": "object", "required": ["healthy", "version", "sandbox", "webApp"], "additionalProperties": False,
        "properties": {
            "healthy": {"type": "boolean", "enum": [True]},
            "version": {"type": "string"},
            "sandbox": {"type": "object", "required": ["mode"], "properties": {
                "mode": {"enum": ["off", "unavailable", "bwrap"]}, "reason": {"type": "string"},
                "network": {"enum": ["outbound", "none", "host"]}, "identity": {"enum": ["uid", "shared"]}}},
            "webApp": {"type": "object", "required": ["version", "pinned", "source", "available"], "properties": {
                "version": {"type": ["string", "null"]}, "pinned": {"type": ["string", "null"]},
                "source": {"enum": ["bundled", "directory", "url"]}, "available": {"type": "boolean"}}},
        }}}
    answers_from_memory = True  # served on the event loop (agentserver/http/handler.py)
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        return Response({"healthy": True, "version": settings.VERSION, "sandbox": sandbox.describe(),
                         "webApp": web_app()})


class HealthV2View(APIView):
    """v2.health.get: public, as opencode's. No `pid`: opencode's web app reads a pid as "speaks only v2"."""

    operation_ids = {"GET": "health.get"}
    mounts = {"v2": "health"}
    answers_from_memory = True
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        return Response({"healthy": True})
