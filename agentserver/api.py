"""Base view and input parsing shared by every DRF route. Views stay thin: parse, call one service
or selector, render."""
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from agentserver import context as runtime
from agentserver.errors import BadRequest


class ApiView(APIView):
    """Authenticated view. `self.context(request)` resolves the runtime context (403 outside roots)."""

    allow_workspace = False

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in ("POST", "PUT", "PATCH"):
            # Parse now, so a malformed body is a 400 on every route, even one that ignores its body or
            # would have answered 404 first.
            request.data  # noqa: B018

    def context(self, request) -> runtime.RuntimeContext:
        return runtime.from_request(request, allow_workspace=self.allow_workspace)


class V2RequestView(ApiView):
    """v2 request-kind operation: `directory` and `workspace` query parameters."""

    allow_workspace = True


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
    if data is None:
        data = {}
    if kind == "Body" and not isinstance(data, dict):
        raise BadRequest("Request body must be a JSON object", kind=kind)
    if not data and isinstance(data, dict) and _empty_is_empty(serializer_class, partial):
        return {}
    serializer = _serializer(serializer_class, data, partial)
    if not serializer.is_valid():
        from agentserver.errors import issues_from_detail

        issues = issues_from_detail(serializer.errors)
        message = "; ".join(f"{'.'.join(str(p) for p in i['path']) or kind.lower()}: {i['message']}" for i in issues)
        raise BadRequest(message or "Invalid input", kind=kind, issues=issues)
    return serializer.validated_data


def parse_query(serializer_class, request) -> dict:
    return parse(serializer_class, request.GET.dict(), kind="Query")


def id_param(value: str, prefix: str, label: str) -> str:
    """Path ids must carry their prefix: GET /session/abc is a 400, never a 500."""
    if not isinstance(value, str) or not value.startswith(prefix) or len(value) > 64:
        raise BadRequest(f"Invalid {label} id: {value!r} (expected {prefix}…)", kind="Params")
    return value


class IdField(serializers.CharField):
    def __init__(self, prefix: str, **kwargs):
        self.prefix = prefix
        kwargs.setdefault("max_length", 64)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not value.startswith(self.prefix):
            raise serializers.ValidationError(f"must start with {self.prefix!r}")
        return value


def ok(data=True, status: int = 200, headers: dict | None = None) -> Response:
    return Response(data, status=status, headers=headers)


class StrictCharField(serializers.CharField):
    """A JSON string only: DRF's CharField would quietly turn 5 into "5"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("must be a string")
        return super().to_internal_value(data)
