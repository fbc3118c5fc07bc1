"""doc: the OpenAPI document of both route sets, generated from the views (agentserver/schema.py)."""
from drf_spectacular.views import SpectacularJSONAPIView
from rest_framework.settings import api_settings


class OpenApiView(SpectacularJSONAPIView):
    operation_ids = {"GET": "doc"}
    # spectacular serves its document to anyone by default; here it follows the API's own rules.
    authentication_classes = api_settings.DEFAULT_AUTHENTICATION_CLASSES
    permission_classes = api_settings.DEFAULT_PERMISSION_CLASSES
    custom_settings = {
        "POSTPROCESSING_HOOKS": [
            "agentserver.schema.add_error_shape_and_plain_routes",
        ],
    }
