"""OpenAPI generation (/doc) from the edge's own declarations, so the document states what the views enforce.

- Bodies, queries and the directory: what each handler declares it takes (`@takes(Body, query=Query,
  directory=True)`, agentserver/http/api.py), the declaration the edge parses with (`self.body(request)`,
  `self.query(request)`; `self.context(request)` refuses a handler that did not declare `directory`), so the
  document cannot drift from what validates.
- Path ids: `agentserver.http.api.PATH_IDS`, the table `ApiView` validates path parameters with.
- Answers: the handler's success statuses (`@succeeds_with(204)`, else 200) and every error the edge and
  the view can give, each in the spec's error shape (`ERROR_STATUSES`, `ApiView.answers`).
- Operation ids: the view's `operation_ids`; routes that are not DRF views (the event streams) are listed too.
- Success bodies: what the view declares (`answer_schemas`, by method; `answer_media_types` for an answer
  that may come as something else than JSON) where its answer is not opencode's by design; else opencode's, for every route opencode also serves (same method and path), since its clients read
  them. opencode's are taken from its own /doc (opencode_answers.json, written by
  scripts/vendor_opencode_answers.py). The tests check every answer a persona receives against /doc
  (tests/answer_audit.py). Routes of agentserver's own that declare nothing say "any JSON".
"""
from __future__ import annotations

import functools
import inspect
import json
import re
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_basic_type
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from agentserver.http import api

V2_PREFIX = "v2:"
JSON = "application/json"
DIRECTORY_PATTERN = api.DIRECTORY_PATTERN
ANY_BUT_NULL = {"type": ["object", "array", "string", "number", "boolean"]}
# What any route of the edge may answer besides its success, and why.
ERROR_STATUSES = {
    400: "Invalid input: a malformed body, query, path id or directory (kind: Body, Query, Params, Headers)",
    401: "No valid credentials (WWW-Authenticate says how to send them)",
    403: "Outside the caller's allowed directories, or a cookie-authenticated write without CSRF",
    404: "No such object of the caller's (other users' objects are not found either)",
}
BODY_STATUSES = {
    413: "Too large: the body (beyond AGENTSERVER_MAX_BODY_BYTES), or what it asks to read",
    415: "A content type the route does not take",
}
EXTRA_STATUSES = {
    409: "The object is busy or in a conflicting state",
    429: "Too many at once (a limit of the server)",
    503: "Programs cannot be started for the user (no sandbox)",
}
ERROR_SCHEMA = {
    "type": "object",
    "required": ["name", "data"],
    "properties": {
        "name": {"type": "string"},
        "data": {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}},
    },
}


# ---- what a handler takes and answers, as it declares it (api.takes, api.succeeds_with) -----------------

class Inputs:
    def __init__(self):
        self.body = None        # a serializer class, or OpenApiTypes.OBJECT for any JSON object (api.AnyObject)
        self.query = None       # a serializer class
        self.partial = False
        self.context = False    # resolves a runtime context (takes directory / workspace)
        self.statuses: set[int] = set()


@functools.cache
def inputs_of(view_class: type, method: str) -> Inputs:
    inputs = Inputs()
    handler = getattr(view_class, method.lower(), None)
    if handler is not None:
        declared = api.inputs_of(view_class, method)
        inputs.body = OpenApiTypes.OBJECT if isinstance(declared.body, api.AnyObject) else declared.body
        inputs.query, inputs.partial, inputs.context = declared.query, declared.partial, declared.directory
        inputs.statuses = set(api.success_statuses(view_class, method))
    return inputs


def string_pattern(field: serializers.CharField) -> dict:
    """What a CharField takes beyond its length, as a pattern: never a NUL character (DRF refuses them),
    and, when it may not be blank, something besides the spaces it trims; an IdField's prefix first."""
    prefix = re.escape(field.prefix) if isinstance(field, api.IdField) else ""
    if field.allow_blank or prefix:
        return {"pattern": f"^{prefix}[^\\x00]*$"}
    if field.trim_whitespace or isinstance(field, api.NonBlankCharField):
        return {"pattern": f"^[^\\x00]*[^{api.WHITESPACE}\\x00][^\\x00]*$"}
    return {"pattern": "^[^\\x00]+$"}


# ---- the schema class -----------------------------------------------------------------------------------

class OperationIdAutoSchema(AutoSchema):
    def _inputs(self) -> Inputs:
        return inputs_of(type(self.view), getattr(self, "_handler_method", None) or self.method)

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

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction != "request":
            return schema
        if isinstance(field, serializers.JSONField) and not schema and not field.allow_null:
            schema = dict(ANY_BUT_NULL)  # any JSON value, and DRF refuses null unless allow_null
        elif isinstance(field, serializers.CharField) and "format" not in schema:
            # In allOf: a RegexField's or RegexValidator's own `pattern` is added after this.
            schema.setdefault("allOf", []).append(string_pattern(field))
        return schema

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        rules = getattr(serializer, "openapi_rules", None)  # what its validate() requires across fields
        if rules and direction == "request":
            schema.update(rules)
        return schema

    def get_serializer_name(self, serializer, direction):
        # Two modules may each have their CommandBody: the module's last part keeps component names unique.
        return f"{type(serializer).__module__.rsplit('.', 1)[-1]}.{super().get_serializer_name(serializer, direction)}"

    def get_description(self):
        # The view's own docstring, not one inherited from the edge's base classes.
        return inspect.cleandoc(type(self.view).__dict__.get("__doc__") or "")

    def _get_serializer(self):
        return None  # a handler's inputs are its @takes declaration, read by _inputs()

    def map_parsers(self):
        return [JSON]  # the lenient parser reads any body as JSON; JSON is what a client sends

    def get_request_serializer(self):
        return self._inputs().body

    def _get_request_body(self, direction="request"):
        if self.method != "DELETE":
            return super()._get_request_body(direction)
        if self._inputs().body is None:
            return None
        # spectacular documents bodies of POST, PUT and PATCH only; this DELETE reads one.
        self._handler_method, self.method = "DELETE", "POST"
        try:
            return super()._get_request_body(direction)
        finally:
            self._handler_method, self.method = None, "DELETE"

    def _get_request_for_media_type(self, serializer, direction="request"):
        # spectacular takes every PATCH body as partial; here the handler's parse() says whether it is.
        partial, method = self._inputs().partial, self.method
        self.method = "PATCH" if partial else ("PUT" if method == "PATCH" else method)
        try:
            schema, required = super()._get_request_for_media_type(serializer, direction)
        finally:
            self.method = method
        if not required and not partial and isinstance(serializer, type):
            try:  # a body is required when an empty one does not validate (a declared union, a credential)
                required = not serializer(data={}).is_valid()
            except Exception:  # noqa: BLE001 - a serializer that cannot even look at {} needs a body
                required = True
        return schema, required and not partial

    def get_override_parameters(self):
        inputs = self._inputs()
        # The query serializer first: the runtime context's own statement of directory/workspace wins.
        parameters = [inputs.query] if inputs.query is not None else []
        if inputs.context:
            parameters.append(OpenApiParameter(
                "directory", {"type": "string", "pattern": DIRECTORY_PATTERN}, OpenApiParameter.QUERY,
                description="An absolute directory to work in, one of your roots or inside one (default: your "
                            "first root). Also taken from the x-opencode-directory header."))
            if getattr(self.view, "allow_workspace", False):
                parameters.append(OpenApiParameter(
                    "workspace", {"type": "string", "pattern": api.WORKSPACE_PATTERN, "maxLength": api.MAX_ID},
                    OpenApiParameter.QUERY, description="A workspace id of yours (wrk…)"))
        return parameters

    def _resolve_path_parameters(self, variables):
        parameters = super()._resolve_path_parameters(variables)
        ids = {**api.PATH_IDS, **getattr(self.view, "path_ids", {})}
        for parameter in parameters:
            schema = parameter["schema"]
            prefix = ids.get(parameter["name"])
            if prefix:
                schema.update(pattern=f"^{re.escape(prefix)}", maxLength=api.MAX_ID)
            elif schema.get("type") == "string":
                schema.setdefault("minLength", 1)
            pattern = getattr(self.view, "path_patterns", {}).get(parameter["name"])
            if pattern:
                schema["pattern"] = pattern
            limit = api.PATH_MAX_LENGTHS.get(parameter["name"])
            if limit:
                schema["maxLength"] = limit
        return parameters

    def get_response_serializers(self):
        inputs = self._inputs()
        successes = sorted(inputs.statuses) or [200]
        responses = {}
        declared = getattr(self.view, "answer_schemas", {}).get(self.method)
        for status in successes:
            schema = None if status == 204 else declared or build_basic_type(OpenApiTypes.ANY)
            responses[status] = OpenApiResponse(schema, description="No content" if status == 204 else "Success")
        errors = dict(ERROR_STATUSES)
        if any(isinstance(p, AllowAny) or p is AllowAny for p in self.view.get_permissions()):
            errors.pop(401)
        if self.method in ("POST", "PUT", "PATCH") or self._inputs().body is not None:
            errors.update(BODY_STATUSES)
        for status in getattr(self.view, "answers", ()):
            errors[status] = {**BODY_STATUSES, **EXTRA_STATUSES}[status]
        for status, description in sorted(errors.items()):
            responses[status] = OpenApiResponse({"$ref": "#/components/schemas/Error"}, description=description)
        return responses

    def _get_response_for_code(self, serializer, status_code, media_types=None, direction="response"):
        response = super()._get_response_for_code(serializer, status_code, [JSON], direction)
        if status_code.startswith("2"):
            # A view that can answer its success in another form too (a diff as text/x-diff) says which.
            others = getattr(self.view, "answer_media_types", {}).get(self.method, {})
            response.setdefault("content", {}).update({media: {"schema": schema} for media, schema in others.items()})
        if status_code == "401":
            response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}, "required": True}}
        if status_code == "400":
            # A request line the HTTP server cannot parse never reaches the API: uvicorn answers it in plain text.
            response["content"]["text/plain"] = {"schema": {"type": "string"}}
        return response


# ---- fields ---------------------------------------------------------------------------------------------

class DeclaredFieldSchema(OpenApiSerializerFieldExtension):
    """A custom field states what it takes in its `openapi_schema` (its to_internal_value is the validator)."""
    target_class = "rest_framework.serializers.Field"
    match_subclasses = True

    @classmethod
    def _matches(cls, target) -> bool:
        return isinstance(getattr(target, "openapi_schema", None), dict)

    def map_serializer_field(self, auto_schema, direction):
        return dict(self.target.openapi_schema)


class DeclaredSerializerSchema(OpenApiSerializerExtension):
    """A serializer whose valid inputs depend on one another (a union keyed by `type`) states them with
    `openapi_schema(auto_schema, direction)`, built from the serializers that validate each case."""
    target_class = "rest_framework.serializers.Serializer"
    match_subclasses = True

    @classmethod
    def _matches(cls, target) -> bool:
        klass = target if isinstance(target, type) else type(target)
        return issubclass(klass, serializers.Serializer) and callable(getattr(klass, "openapi_schema", None))

    def map_serializer(self, auto_schema, direction):
        return self.target.openapi_schema(auto_schema, direction)


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "auth_app.authentication.ApiTokenAuthentication"
    name = ("bearerAuth", "basicAuth")

    def get_security_definition(self, auto_schema):
        return [{"type": "http", "scheme": "bearer"}, {"type": "http", "scheme": "basic"}]


class AdminSessionScheme(OpenApiAuthenticationExtension):
    target_class = "auth_app.authentication.JsonOnlySessionAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": "sessionid"}


# ---- postprocessing -------------------------------------------------------------------------------------

def _walk(patterns, prefix: str = "", namespace: str = ""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            child_ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), child_ns)
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def _openapi_path(route: str) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route).lstrip("^").rstrip("$")


def add_error_shape_and_plain_routes(result, generator, request, public):
    """Postprocessing hook: the one error shape every error answer refers to, and the routes spectacular
    cannot see (the SSE streams are plain async views); /doc leaves itself out."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    paths = result.setdefault("paths", {})
    for route, pattern in _walk(get_resolver().url_patterns):
        path = _openapi_path(route)
        if route.startswith("admin/") or not pattern.name or path in paths:
            continue  # the admin is not API; DRF views are documented already
        operation_id = f"{V2_PREFIX}{pattern.name}" if path.startswith("/api/") else pattern.name
        is_stream = not hasattr(pattern.callback, "cls")
        error = {"content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}}}
        responses = {"200": {"description": "text/event-stream" if is_stream else "OK"},
                     "401": {**error, "description": ERROR_STATUSES[401],
                             "headers": {"WWW-Authenticate": {"schema": {"type": "string"}, "required": True}}}}
        if is_stream:  # sse.open_stream: the directory, and a bound on each user's open streams
            responses.update({str(status): {**error, "description": description} for status, description in (
                (400, ERROR_STATUSES[400]), (403, ERROR_STATUSES[403]), (404, ERROR_STATUSES[404]),
                (429, "Too many open event streams for this user"))})
        parameters = [{"in": "path", "name": name, "required": True, "schema": _path_schema(name)}
                      for name in re.findall(r"{(\w+)}", path)]
        parameters += getattr(pattern.callback, "openapi_parameters", [])
        if path in ("/event", "/api/event"):  # the others take no directory (global; the session's own)
            parameters.append({"in": "query", "name": "directory", "required": False,
                               "schema": {"type": "string", "pattern": DIRECTORY_PATTERN}})
        paths[path] = {"get": {
            "operationId": operation_id,
            "description": "Server-sent events (text/event-stream)." if is_stream else "",
            **({"parameters": parameters} if parameters else {}),
            "security": [{"bearerAuth": [], "basicAuth": []}, {"cookieAuth": []}],
            "responses": responses,
        }}
    return result


# Where agentserver's records carry more than opencode's components allow, by design; applied to the vendored
# components, so every route that answers them says so.
COMPONENT_EXTENSIONS = {
    # A file's whole text before and after beside its patch: the seed-era FileDiff the reference still lists
    # (reference §3.7), which the v1 SDK's FileDiff has.
    "SnapshotFileDiff": {"properties": {"before": {"type": "string"}, "after": {"type": "string"}}},
    # A config keeps the keys a user wrote that opencode 1.18 does not know (a newer opencode's, a plugin's),
    # and a reference's source says its kind ({type: "local", path} / {type: "git", repository}).
    "Config": {"additionalProperties": True},
    "ConfigV2ReferenceGit": {"properties": {"type": {"enum": ["git"]}}},
    "ConfigV2ReferenceLocal": {"properties": {"type": {"enum": ["local"]}}},
}


@functools.cache
def _opencode_answers() -> dict:
    vendored = json.loads((Path(__file__).with_name("opencode_answers.json")).read_text())
    for name, extension in COMPONENT_EXTENSIONS.items():
        schema = vendored["schemas"][name]
        schema["properties"] = {**schema.get("properties", {}), **extension.get("properties", {})}
        if "additionalProperties" in extension:
            schema["additionalProperties"] = extension["additionalProperties"]
    return vendored


def _route_key(method: str, path: str) -> str:
    return f"{method.upper()} {re.sub(r'{[^}]+}', '{}', path)}"


def _with_opencode_answers(schema, answers: dict):
    """`schema` with each api.opencode(route) marker replaced by that route's vendored answer."""
    if isinstance(schema, dict):
        if api.OPENCODE_ANSWER in schema:
            route, status = schema[api.OPENCODE_ANSWER]
            return answers[route][status]
        return {key: _with_opencode_answers(value, answers) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_with_opencode_answers(value, answers) for value in schema]
    return schema


def state_opencode_answers(result, generator, request, public):
    """Postprocessing hook: each success body opencode documents for a route it shares with us, and the
    components those schemas reach. A body the view declared itself stays (its api.opencode markers filled
    in); a status opencode does not list for the route keeps "any JSON"."""
    vendored = _opencode_answers()
    result["paths"] = _with_opencode_answers(result.get("paths", {}), vendored["answers"])
    for path, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
            answers = vendored["answers"].get(_route_key(method, path))
            if not answers:
                continue
            for status, response in operation.get("responses", {}).items():
                if status in answers and JSON not in response.get("content", {}):
                    response.setdefault("content", {})[JSON] = {"schema": answers[status]}
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in vendored["schemas"].items():
        schemas.setdefault(name, schema)  # the views' own answers refer to them too (Message, Part)
    return result


def _path_schema(name: str) -> dict:
    prefix = api.PATH_IDS.get(name)
    if prefix:
        return {"type": "string", "pattern": f"^{re.escape(prefix)}", "maxLength": api.MAX_ID}
    return {"type": "string", "minLength": 1}

