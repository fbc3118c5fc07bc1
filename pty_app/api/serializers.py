"""Input shapes of the pty.* routes. Strings are strict: {"command": 5} is a 400, as in the reference, not "5"."""
import re

from rest_framework import serializers

from agentserver.http.api import StrictCharField, StrictIntegerField

ENV_NAME_PATTERN = r"^[^=\x00]+$"


class EnvironmentField(serializers.DictField):
    """Variables for the terminal: names without `=` or NUL (services._check_env checks the same)."""

    child = StrictCharField(allow_blank=True, max_length=65536)
    openapi_schema = {"type": "object", "propertyNames": {"pattern": ENV_NAME_PATTERN},
                      "additionalProperties": {"type": "string", "maxLength": 65536, "pattern": "^[^\\x00]*$"}}

    def to_internal_value(self, data):
        env = super().to_internal_value(data)
        for key in env:
            if not re.match(ENV_NAME_PATTERN, key):
                raise serializers.ValidationError({key: ["invalid name"]})
        return env


def _dimension() -> StrictIntegerField:
    return StrictIntegerField(min_value=1, max_value=10000)


class PtyCreateInput(serializers.Serializer):
    command = StrictCharField(required=False, max_length=4096)
    args = serializers.ListField(child=StrictCharField(allow_blank=True, trim_whitespace=False, max_length=65536),
                                 required=False, max_length=1000)
    cwd = StrictCharField(required=False, max_length=4096)
    title = StrictCharField(required=False, allow_blank=True, max_length=1024)
    env = EnvironmentField(required=False)


class V2PtyCreateInput(PtyCreateInput):
    """v2 adds `shell`: the program to start; with `command` too, the shell runs that command line."""

    shell = StrictCharField(required=False, max_length=4096)


class SizeInput(serializers.Serializer):
    rows = _dimension()
    cols = _dimension()


class PtyUpdateInput(serializers.Serializer):
    title = StrictCharField(required=False, allow_blank=True, max_length=1024)
    size = SizeInput(required=False)


class V2SizeInput(serializers.Serializer):
    openapi_rules = {"anyOf": [{"required": ["columns"]}, {"required": ["cols"]}]}  # validate(), for /doc

    rows = _dimension()
    columns = StrictIntegerField(min_value=1, max_value=10000, required=False)
    cols = StrictIntegerField(min_value=1, max_value=10000, required=False)

    def validate(self, attrs):
        cols = attrs.get("columns", attrs.get("cols"))
        if cols is None:
            raise serializers.ValidationError({"columns": ["This field is required."]})
        return {"rows": attrs["rows"], "cols": cols}


class V2PtyUpdateInput(serializers.Serializer):
    title = StrictCharField(required=False, allow_blank=True, max_length=1024)
    size = V2SizeInput(required=False)
