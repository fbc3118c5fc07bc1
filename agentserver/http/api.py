"""The HTTP edge every DRF route goes through: the base views, what a handler declares it takes (`@takes`) and
the parsing of it, the strict input fields, the one wording of a 400, the v2 envelopes, and how a URL pattern is
registered (named by its operation ids). Views stay thin: read the declared input, call one service or selector,
render."""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar

from django.core.exceptions import ImproperlyConfigured
from django.core.validators import RegexValidator
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from agentserver.context import RuntimeContext
from agentserver.errors import BadRequest, invalid_input

MAX_ID = 64
# The path parameters that are ids, by name, and their prefix: ApiView refuses any other value (400, kind
# Params) before the handler runs, and /doc states the same pattern. A view whose parameter of another name
# is an id, or whose `requestID` is a question's, says so in its own `path_ids`.
PATH_IDS = {"sessionID": "ses", "messageID": "msg", "partID": "prt", "permissionID": "per", "questionID": "que",
            "ptyID": "pty", "workspaceID": "wrk", "accountID": "acc"}
# What a runtime context takes as a directory: absolute, or empty for the default (projects_app.contexts).
# Python's white space (str.isspace, what strip() removes), spelled out for a regex character class: `\s`
# means this in Python but less in ECMAScript, so a pattern /doc states with `\s` would take characters the
# server's own check refuses (U+0085, say).
WHITESPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
DIRECTORY_PATTERN = r"^(/[^\x00]*)?$"
# What a runtime context takes as a workspace: one of the caller's ids (wrk…), or empty for none.
WORKSPACE_PATTERN = r"^(wrk[^\x00]*)?$"
# A directory in a body: absolute.
directory_validator = RegexValidator(r"^/", message="Path must be absolute")

# Path parameters that are not ids but have a longest value the views take (/doc states it).
PATH_MAX_LENGTHS = {"providerID": 255, "projectID": 128}

# ---- the runtime context of a request ------------------------------------------------------------------
# How a request's directory becomes a RuntimeContext (git, projects, workspaces, the user's roots) is
# projects_app's to know; it hands its resolver in at start-up (ProjectsAppConfig.ready).
ContextResolver = Callable[..., RuntimeContext]
_resolve_context: ContextResolver | None = None


def resolve_contexts_with(resolver: ContextResolver) -> None:
    """`resolver(request, *, allow_workspace: bool, query: dict | None) -> RuntimeContext`."""
    global _resolve_context
    _resolve_context = resolver


class ApiView(APIView):
    """Authenticated view. `self.body(request)` and `self.query(request)` are the input its handler declares
    (`@takes`); `self.context(request)` resolves the runtime context (403 outside roots)."""

    allow_workspace = False
    path_ids: ClassVar[dict[str, str]] = {}  # path parameters that are ids beyond PATH_IDS: name -> prefix
    path_patterns: ClassVar[dict[str, str]] = {}  # what the view's own check of a path parameter takes, for /doc
    answers: tuple[int, ...] = ()  # error statuses beyond the edge's own (409, 429, 503), for /doc

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        for name, value in kwargs.items():
            prefix = self.path_ids.get(name) or PATH_IDS.get(name)
            if prefix:
                id_param(value, prefix, ID_LABELS[prefix])
        if request.method in ("POST", "PUT", "PATCH"):
            # Parse now, so a malformed body is a 400 on every route, even one that ignores its body or
            # would have answered 404 first.
            request.data  # noqa: B018

    def declared(self, request, what: str) -> Takes:
        """The running handler's declaration, which must name `what` ("body", "query", "directory")."""
        inputs = inputs_of(self, request.method)
        if not getattr(inputs, what):
            # /doc states a handler's input from its declaration: one that reads an input declares it.
            raise ImproperlyConfigured(f"{type(self).__name__}.{request.method.lower()} reads its {what}: "
                                       f"declare it with @takes")
        return inputs

    def body(self, request) -> dict:
        """The request's body, validated as the handler declared (`@takes(Serializer)`): else a 400."""
        inputs = self.declared(request, "body")
        data = inputs.prepare(self, request.data) if inputs.prepare is not None else request.data
        if isinstance(inputs.body, AnyObject):
            return body_object(data, inputs.body.what)
        return parse(inputs.body, data, partial=inputs.partial)

    def query(self, request) -> dict:
        """The request's query parameters, validated as the handler declared (`@takes(query=Serializer)`)."""
        return parse_query(self.declared(request, "query").query, request)

    def context(self, request, *, query: dict | None = None) -> RuntimeContext:
        """`query`: the directory/workspace parameters when the route takes them in another form."""
        if _resolve_context is None:
            raise ImproperlyConfigured("no runtime context resolver: is projects_app installed?")
        self.declared(request, "directory")
        if self.allow_workspace:
            workspace = (query if query is not None else request.GET).get("workspace")
            if workspace and (len(workspace) > MAX_ID or not re.fullmatch(WORKSPACE_PATTERN, workspace)):
                raise BadRequest(expected(_an_id("wrk", "workspace"), workspace), kind="Query")
        return _resolve_context(request, allow_workspace=self.allow_workspace, query=query)


class V2RequestView(ApiView):
    """v2 request-kind operation: `directory` and `workspace` query parameters."""

    allow_workspace = True


class LocatedView(V2RequestView):
    """v2 view that answers `{location, data}` and also takes the TUI's `location[directory]` /
    `location[workspace]` query form."""

    def context(self, request, *, query: dict | None = None) -> RuntimeContext:
        directory = request.GET.get("location[directory]")
        workspace = request.GET.get("location[workspace]")
        if query is not None or request.GET.get("directory") or not (directory or workspace):
            return super().context(request, query=query)
        located = {k: v for k, v in (("directory", directory), ("workspace", workspace)) if v}
        return super().context(request, query=located)

    def located(self, request, data) -> Response:
        return Response({"location": self.context(request).location(), "data": data})


# ---- the one wording of a 400 ----------------------------------------------------------------------------

def expected(what: str, value) -> str:
    """A value of the wrong kind, worded as opencode words it: `Expected string, got 5`."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return f"Expected {what}, got {shown if len(shown) <= 80 else shown[:79] + '…'}"


def _an_id(prefix: str, label: str | None) -> str:
    return f'{f"a {label}" if label else "an"} id ("{prefix}…", at most {MAX_ID} characters)'


# ---- input ---------------------------------------------------------------------------------------------
# DRF builds a serializer's fields anew for every instance (a deep copy of each declared field, validators
# and all), which cost more than the validation itself on every request. The input serializers here carry no
# per-request state in their fields (no context, no instance), so each class binds its fields once and every
# later instance validates with those.
_bound_fields: dict[tuple[type, bool], object] = {}


def _serializer(serializer_class: type[serializers.Serializer], data, partial: bool) -> serializers.Serializer:
    serializer = serializer_class(data=data, partial=partial)
    fields = _bound_fields.get((serializer_class, partial))
    if fields is None:
        fields = _bound_fields.setdefault((serializer_class, partial), serializer_class(partial=partial).fields)
    serializer.__dict__["fields"] = fields  # `fields` is a cached_property: this is its cached value
    return serializer


_empty_ok: dict[tuple[type, bool], bool] = {}


def _empty_is_empty(serializer_class: type[serializers.Serializer], partial: bool) -> bool:
    """Whether `{}` validates to `{}` without asking: no field is required or has a default, and the class
    checks nothing beyond its fields (most bodies, POST /session's among them, are often empty)."""
    known = _empty_ok.get((serializer_class, partial))
    if known is None:
        fields = _serializer(serializer_class, {}, partial).fields
        plain = all(getattr(serializer_class, name) is getattr(serializers.Serializer, name)
                    for name in ("validate", "to_internal_value", "run_validation", "get_validators"))
        known = plain and not getattr(getattr(serializer_class, "Meta", None), "validators", None) and all(
            not field.required and field.default is serializers.empty for field in fields.values())
        _empty_ok[(serializer_class, partial)] = known
    return known


def parse(serializer_class: type[serializers.Serializer], data, *, kind: str = "Body", partial: bool = False) -> dict:
    """Validate `data` with a serializer; a non-object body or invalid field is a 400 BadRequestError."""
    if data is None and kind != "Body":
        data = {}
    if kind == "Body":
        body_object(data)
    if not data and isinstance(data, dict) and _empty_is_empty(serializer_class, partial):
        return {}
    serializer = _serializer(serializer_class, data, partial)
    if not serializer.is_valid():
        raise invalid_input(serializer.errors, kind=kind)
    return serializer.validated_data


def parse_query(serializer_class: type[serializers.Serializer], request) -> dict:
    return parse(serializer_class, request.GET.dict(), kind="Query")


def body_object(data, what: str = "a JSON object") -> dict:
    """A body that must be an object (a Config, a Part): anything else is a 400."""
    if not isinstance(data, dict):
        raise BadRequest(expected(what, data), kind="Body")
    return data


# ---- what an operation takes, declared on its handler ------------------------------------------------------
# A handler says what it takes with `@takes(...)`, and nowhere else: it reads its input with `self.body(request)`
# and `self.query(request)`, which parse what it declared, at the moment it chooses (after its path's objects are
# found: another's session is a 404 whatever the body holds). /doc (agentserver/http/schema.py) and the battery
# read the same declaration (`inputs_of`), so what the document states is what the edge validates.

@dataclass(frozen=True)
class AnyObject:
    """A body that may be any JSON object (a Config, a Part); `what` is how a 400 names it."""

    what: str = "a JSON object"


ANY_OBJECT = AnyObject()


@dataclass(frozen=True)
class Takes:
    """`body`: a serializer class, an AnyObject, or the name of a view attribute holding either (a base class's
    handler whose subclasses each name their body); `query`: a serializer class; `partial`: fields of the body
    may be left out; `prepare(view, data)`: what the body serializer is given, made from the request's body
    (the v2 replies' `response` spelling); `directory`: the handler works in a runtime context
    (`self.context(request)`), so it takes `directory` (and `workspace` where the view allows one)."""

    body: type[serializers.Serializer] | AnyObject | str | None = None
    query: type[serializers.Serializer] | None = None
    partial: bool = False
    prepare: Callable | None = None
    directory: bool = False

    def of(self, view) -> Takes:
        """This declaration with a body named by attribute resolved on `view` (a view class or instance)."""
        if not isinstance(self.body, str):
            return self
        return _resolved(self, view if isinstance(view, type) else type(view))


@functools.cache
def _resolved(declared: Takes, view_class: type) -> Takes:
    return replace(declared, body=getattr(view_class, declared.body))


NOTHING = Takes()


def takes(body: type[serializers.Serializer] | AnyObject | str | None = None, *,
          query: type[serializers.Serializer] | None = None, partial: bool = False,
          prepare: Callable | None = None, directory: bool = False):
    """Declares what a handler takes (see Takes)."""
    declared = Takes(body, query, partial, prepare, directory)

    def declare(handler):
        handler.takes = declared
        return handler
    return declare


def succeeds_with(*statuses: int):
    """Declares the 2xx statuses a handler answers (200 when it declares none), for /doc."""
    def declare(handler):
        handler.success_statuses = statuses
        return handler
    return declare


def success_statuses(view, method: str) -> tuple[int, ...]:
    return getattr(getattr(view, method.lower(), None), "success_statuses", (200,))


def inputs_of(view, method: str) -> Takes:
    """What the handler of `method` on `view` (a view class or instance) declares it takes; NOTHING when it
    declares nothing."""
    declared = getattr(getattr(view, method.lower(), None), "takes", None)
    return declared.of(view) if declared is not None else NOTHING


def id_param(value: str, prefix: str, label: str) -> str:
    """Path ids must carry their prefix: GET /session/abc is a 400, never a 500."""
    if not isinstance(value, str) or not value.startswith(prefix) or len(value) > MAX_ID:
        raise BadRequest(expected(_an_id(prefix, label), value), kind="Params")
    return value


def json_integer(value) -> int | None:
    """A JSON integer as JSON Schema counts one (5 and 5.0 alike: its `integer` is the mathematical value);
    None for anything else, true and false included."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


class StrictCharField(serializers.CharField):
    """A JSON string only, as sent: DRF's CharField would quietly turn 5 into "5" and strip spaces."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError(expected("string", data), code="invalid")
        return super().to_internal_value(data)


class NonBlankCharField(StrictCharField):
    """A JSON string as sent (not trimmed) with something besides white space in it; /doc says so."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not value.strip():
            raise serializers.ValidationError("This field may not be blank.", code="blank")
        return value


class StrictBooleanField(serializers.BooleanField):
    """true or false only: DRF's BooleanField would take "yes", 1 and "on"."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            raise serializers.ValidationError(expected("boolean", data), code="invalid")
        return data


class StrictIntegerField(serializers.IntegerField):
    """A JSON number that is whole: DRF's IntegerField would take "5" and true."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise serializers.ValidationError(expected("integer", data), code="invalid")
        return super().to_internal_value(data)


ID_LABELS = {"ses": "session", "msg": "message", "prt": "part", "per": "permission", "que": "question",
             "pty": "pty", "wrk": "workspace", "acc": "account"}


class IdField(serializers.CharField):
    """An id in a body or a query: a string with its prefix (`msg…`)."""

    def __init__(self, prefix: str, **kwargs):
        self.prefix = prefix
        kwargs.setdefault("max_length", MAX_ID)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data) if isinstance(data, str) else data
        if not isinstance(value, str) or not value.startswith(self.prefix):
            raise serializers.ValidationError(expected(_an_id(self.prefix, ID_LABELS.get(self.prefix)), data),
                                              code="invalid")
        return value


# ---- output --------------------------------------------------------------------------------------------

def ok(data=True, status: int = 200, headers: dict | None = None) -> Response:
    return Response(data, status=status, headers=headers)


# A v2 list's cursor (`cursor.next`, X-Next-Cursor) is its position's values joined by dots: opaque to
# clients, yet a CursorField states its exact shape, so every cursor the document admits can be read.
CURSOR_PARTS = {"time": r"\d{1,15}", "id": r"[A-Za-z0-9_]{1,64}", "order": r"asc|desc"}


def encode_cursor(data: dict) -> str:
    return ".".join(str(value) for value in data.values())


def decode_cursor(value: str, *keys: str) -> dict:
    """The values of `keys` (strings), in the order encode_cursor was given them."""
    parts = value.split(".")
    if len(parts) != len(keys) or not all(parts):
        raise BadRequest(f"Invalid cursor: {value!r}", kind="Query")
    return dict(zip(keys, parts, strict=True))


class CursorField(serializers.RegexField):
    """A cursor made of these parts (CURSOR_PARTS), in this order."""

    def __init__(self, *parts: str, **kwargs):
        pattern = r"^" + r"\.".join(f"(?:{CURSOR_PARTS[part]})" for part in parts) + r"$"
        kwargs.setdefault("error_messages", {"invalid": "Invalid cursor"})
        super().__init__(pattern, **kwargs)


def page(items: list, next_cursor: str | None) -> Response:
    """The v2 list envelope: `{data, cursor: {next?}}` plus `X-Next-Cursor`."""
    return Response({"data": items, "cursor": {"next": next_cursor} if next_cursor else {}},
                    headers={"X-Next-Cursor": next_cursor} if next_cursor else None)


# ---- answers /doc states for a view's `answer_schemas` (agentserver/http/schema.py) --------------------------

def ref(component: str) -> dict:
    """A component of /doc: opencode's (opencode_answers.json) or the document's own."""
    return {"$ref": f"#/components/schemas/{component}"}


OPENCODE_ANSWER = "x-opencode-answer"


def opencode(route: str, status: str = "200") -> dict:
    """What opencode's document says `route` ("GET /find") answers: the v2 routes answer the original ones'
    records in their envelopes. agentserver/http/schema.py puts the schema in its place."""
    return {OPENCODE_ANSWER: [route, status]}


def array(items: dict) -> dict:
    return {"type": "array", "items": items}


def record(required: dict, optional: dict | None = None, *, closed: bool = True) -> dict:
    """An object with these fields (each a schema); `closed`: no other field."""
    schema = {"type": "object", "required": list(required), "properties": {**required, **(optional or {})}}
    if closed:
        schema["additionalProperties"] = False
    return schema


def enveloped(data: dict) -> dict:
    """A v2 answer: `{data}`."""
    return record({"data": data})


def located(data: dict) -> dict:
    """A v2 answer that says where it was made (LocatedView): `{location, data}`."""
    return record({"location": ref("LocationInfo"), "data": data})


STRING, NUMBER, INTEGER, BOOLEAN = {"type": "string"}, {"type": "number"}, {"type": "integer"}, {"type": "boolean"}
NULLABLE_STRING = {"type": ["string", "null"]}
TRUE = {"type": "boolean", "enum": [True]}
OBJECT = {"type": "object"}
TIMES = record({"created": NUMBER, "updated": NUMBER})
