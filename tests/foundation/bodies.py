"""What a route's JSON body may hold, read from the view itself: the serializer its handler declares it takes
(`@takes(...)`, read with `agentserver.http.api.inputs_of`, the declaration the edge parses with), and a value of
the wrong type for one of that serializer's fields. The battery sends that value and expects a 400 that names the
field."""
from __future__ import annotations

from rest_framework import serializers

from agentserver.http.api import inputs_of
from tests.foundation.routes import Route


def body_serializer(route: Route) -> type[serializers.Serializer] | None:
    """The serializer class the route's handler parses its body with, or None when it parses none."""
    body = inputs_of(route.view_class, route.method).body
    return body if isinstance(body, type) and issubclass(body, serializers.Serializer) else None


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
