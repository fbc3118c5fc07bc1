"""doc: the OpenAPI document of both route sets, generated from the views (agentserver/http/schema.py)."""
import threading

from drf_spectacular.views import SpectacularJSONAPIView
from rest_framework.response import Response
from rest_framework.settings import api_settings


class OpenApiView(SpectacularJSONAPIView):
    operation_ids = {"GET": "doc"}
    mounts = {"original": "doc"}
    # spectacular serves its document to anyone by default; here it follows the API's own rules.
    authentication_classes = api_settings.DEFAULT_AUTHENTICATION_CLASSES
    permission_classes = api_settings.DEFAULT_PERMISSION_CLASSES

    # The document depends only on the code, so a worker builds it once. Building it is not safe to run twice
    # at once (spectacular keeps its state in module globals), and several clients loading /doc from a fresh
    # worker at the same moment got a 500.
    _built: dict | None = None
    _building = threading.Lock()

    def _get_schema_response(self, request):
        with OpenApiView._building:
            if OpenApiView._built is None:
                OpenApiView._built = super()._get_schema_response(request).data
        return Response(OpenApiView._built)
