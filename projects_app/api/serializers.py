"""Input of the foundation routes of projects_app (project.update on both mounts)."""
from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """DRF's CharField turns 5 into "5"; the API wants a string and says so otherwise."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


def string(**kwargs) -> StrictCharField:
    return StrictCharField(required=False, allow_blank=True, trim_whitespace=False, **kwargs)


class ProjectIconSerializer(serializers.Serializer):
    url = string(max_length=4096)
    color = string(max_length=64)
    override = string(max_length=4096)


class ProjectCommandsField(serializers.DictField):
    child = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=10000)


class ProjectUpdateSerializer(serializers.Serializer):
    name = string(allow_null=True, max_length=255)
    icon = ProjectIconSerializer(required=False, allow_null=True)
    commands = ProjectCommandsField(required=False, allow_null=True)


class ProjectCommandSerializer(serializers.Serializer):
    name = StrictCharField(max_length=255)
    command = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=10000)


class V2ProjectUpdateSerializer(serializers.Serializer):
    name = string(allow_null=True, max_length=255)
    icon = string(allow_null=True, max_length=4096)
    commands = serializers.ListField(child=ProjectCommandSerializer(), required=False, allow_null=True)
