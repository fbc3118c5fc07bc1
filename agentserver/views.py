"""Server-wide routes: health, the three event streams, the OpenAPI document."""
from django.conf import settings
from django.http import JsonResponse
from drf_spectacular.views import SpectacularJSONAPIView
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from agentserver.api import ApiView
from agentserver.instance import instance_dispose
from agentserver.sse import global_event_stream, instance_event_stream, v2_event_stream  # noqa: F401


class HealthView(APIView):
    operation_ids = {"GET": "global.health"}
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        from agentserver import sandbox
        from web_app.assets import describe as web_app

        return Response({"healthy": True, "version": settings.VERSION, "sandbox": sandbox.describe(),
                         "webApp": web_app()})


class HealthV2View(APIView):
    """v2.health.get: public, as opencode's. No `pid`: opencode's web app reads a pid as "speaks only v2"."""

    operation_ids = {"GET": "health.get"}
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        return Response({"healthy": True})


class OpenApiView(SpectacularJSONAPIView):
    operation_ids = {"GET": "doc"}
    # spectacular serves its document to anyone by default; here it follows the API's own rules.
    authentication_classes = api_settings.DEFAULT_AUTHENTICATION_CLASSES
    permission_classes = api_settings.DEFAULT_PERMISSION_CLASSES
    custom_settings = {
        "POSTPROCESSING_HOOKS": [
            "drf_spectacular.hooks.postprocess_schema_enums",
            "agentserver.schema.add_plain_django_routes",
        ],
    }


def not_found(request, exception=None):
    return JsonResponse({"name": "NotFoundError", "data": {"message": f"No route: {request.method} {request.path}"}},
                        status=404)


def server_error(request):
    return JsonResponse({"name": "UnknownError", "data": {"message": "Unexpected server error"}}, status=500)


class InstanceDisposeView(ApiView):
    operation_ids = {"POST": "instance.dispose"}

    def post(self, request):
        return Response(instance_dispose(context=self.context(request)))
