"""What a route's JSON body may hold, read from the view itself: the serializer its handler (or a helper
of its module that the handler calls) gives to `agentserver.http.api.parse`, and a value of the wrong type for
one of that serializer's fields. The battery sends that value and expects a 400 that names the field."""
from __future__ import annotations

import inspect
import re
import sys

from rest_framework import serializers

from tests.foundation.routes import Route

_PARSE = re.compile(r"\bparse\(\s*([A-Za-z_][\w.]*)\s*,")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")


def _resolve(dotted: str, namespace: dict):
    value = namespace.get(dotted.split(".")[0])
    for attribute in dotted.split(".")[1:]:
        value = getattr(value, attribute, None)
    return value


def body_serializer(route: Route) -> type[serializers.Serializer] | None:
    """The serializer class the route's handler parses its body with, or None when it parses none."""
    handler = getattr(route.view_class, route.method.lower(), None)
    if handler is None:
        return None
    module = handler.__module__  # a combined view's handlers come from their own modules
    namespace = vars(sys.modules[module])
    sources = [inspect.getsource(handler)]
    # One level of module helpers (`_prompt_input(request.data)` parses for several views).
    for name in _CALL.findall(sources[0]):
        helper = namespace.get(name)
        if inspect.isfunction(helper) and helper.__module__ == module:
            sources.append(inspect.getsource(helper))
    for source in sources:
        for dotted in _PARSE.findall(source):
            found = _resolve(dotted, namespace)
            if inspect.isclass(found) and issubclass(found, serializers.Serializer):
                return found
    return None


def wrong_value(field: serializers.Field):
    """A JSON value the field must refuse, or None for fields that take anything."""
    if isinstance(field, (serializers.ListSerializer, serializers.ListField)):
        return "not a list"
    if isinstance(field, (serializers.Serializer, serializers.DictField)):
        return "not an object"
    if isinstance(field, serializers.ChoiceField):
        return "no-such-choice"
    if isinstance(field, serializers.BooleanField):
        return "not a boolean"
    if isinstance(field, (serializers.IntegerField, serializers.FloatField)):
        return "not a number"
    if isinstance(field, serializers.CharField):
        return {"not": "a string"}
    return None


def malformed_field(route: Route) -> tuple[str, object] | None:
    """(field name, wrong value) for the first field of the route's body that has a wrong value."""
    serializer = body_serializer(route)
    if serializer is None:
        return None
    for name, field in serializer().fields.items():
        if field.read_only:
            continue
        value = wrong_value(field)
        if value is not None:
            return name, value
    return None
