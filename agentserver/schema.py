"""OpenAPI generation (/doc): every operation is named with the spec's operation id (the view's
`operation_ids`), routes that are not DRF views (the SSE streams) are listed too, and plain APIViews
without serializers are documented without spectacular's warnings."""
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework.views import APIView

V2_PREFIX = "v2:"


class OperationIdAutoSchema(AutoSchema):
    def get_operation_id(self):
        operation_ids = getattr(self.view, "operation_ids", None) or {}
        operation_id = operation_ids.get(self.method.upper())
        if operation_id:
            first_method = next(m for m, op in operation_ids.items() if op == operation_id)
            if first_method.upper() != self.method.upper():
                # A second method mounted for one operation (PUT beside PATCH) is an alias: keep ids unique.
                operation_id = f"{operation_id}.{self.method.lower()}"
            # Both mounts share operation ids; the v2 one is prefixed (as its URL name is) to stay unique.
            return f"{V2_PREFIX}{operation_id}" if self.path.startswith("/api/") else operation_id
        return super().get_operation_id()

    def _get_serializer(self):
        view = self.view
        if isinstance(view, APIView) and not any(
            hasattr(view, attr) for attr in ("get_serializer", "get_serializer_class", "serializer_class")
        ):
            return None  # thin views parse their input by hand: document them without a body schema
        return super()._get_serializer()


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "auth_app.authentication.ApiTokenAuthentication"
    name = ["bearerAuth", "basicAuth"]

    def get_security_definition(self, auto_schema):
        return [{"type": "http", "scheme": "bearer"}, {"type": "http", "scheme": "basic"}]


class AdminSessionScheme(OpenApiAuthenticationExtension):
    target_class = "auth_app.authentication.JsonOnlySessionAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": "sessionid"}


def _walk(patterns, prefix: str = "", namespace: str = ""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            child_ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), child_ns)
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def _openapi_path(route: str) -> str:
    import re

    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route).lstrip("^").rstrip("$")


def add_plain_django_routes(result, generator, request, public):
    """Postprocessing hook: the SSE streams are plain async views that spectacular cannot see, and /doc
    leaves itself out."""
    paths = result.setdefault("paths", {})
    for route, pattern in _walk(get_resolver().url_patterns):
        path = _openapi_path(route)
        if route.startswith("admin/") or not pattern.name or path in paths:
            continue  # the admin is not API; DRF views are documented already
        operation_id = f"{V2_PREFIX}{pattern.name}" if path.startswith("/api/") else pattern.name
        is_stream = not hasattr(pattern.callback, "cls")
        paths[path] = {"get": {
            "operationId": operation_id,
            "description": "Server-sent events (text/event-stream)." if is_stream else "",
            "responses": {"200": {"description": "text/event-stream" if is_stream else "OK"}},
        }}
    return result
