"""Input shapes. Strings are strict: {"command": 5} is a 400, as in the reference, not "5"."""
from rest_framework import serializers


class StrictString(serializers.CharField):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError(f"Expected string, got {type(data).__name__}")
        return super().to_internal_value(data)


class StrictInteger(serializers.IntegerField):
    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise serializers.ValidationError(f"Expected number, got {type(data).__name__}")
        return super().to_internal_value(data)


def _dimension() -> StrictInteger:
    return StrictInteger(min_value=1, max_value=10000)


class PtyCreateInput(serializers.Serializer):
    command = StrictString(required=False, max_length=4096)
    args = serializers.ListField(child=StrictString(allow_blank=True, trim_whitespace=False, max_length=65536),
                                 required=False, max_length=1000)
    cwd = StrictString(required=False, max_length=4096)
    title = StrictString(required=False, allow_blank=True, max_length=1024)
    env = serializers.DictField(child=StrictString(allow_blank=True, trim_whitespace=False, max_length=65536),
                                required=False)


class V2PtyCreateInput(PtyCreateInput):
    """v2 adds `shell`: the program to start; with `command` too, the shell runs that command line."""

    shell = StrictString(required=False, max_length=4096)


class SizeInput(serializers.Serializer):
    rows = _dimension()
    cols = _dimension()


class PtyUpdateInput(serializers.Serializer):
    title = StrictString(required=False, allow_blank=True, max_length=1024)
    size = SizeInput(required=False)


class V2SizeInput(serializers.Serializer):
    rows = _dimension()
    columns = StrictInteger(min_value=1, max_value=10000, required=False)
    cols = StrictInteger(min_value=1, max_value=10000, required=False)

    def validate(self, attrs):
        cols = attrs.get("columns", attrs.get("cols"))
        if cols is None:
            raise serializers.ValidationError({"columns": ["This field is required."]})
        return {"rows": attrs["rows"], "cols": cols}


class V2PtyUpdateInput(serializers.Serializer):
    title = StrictString(required=False, allow_blank=True, max_length=1024)
    size = V2SizeInput(required=False)
