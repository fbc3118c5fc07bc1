"""Input shapes of the session routes shared by several of their modules (original and v2), and the answers
/doc states for the routes whose answer is not opencode's (agentserver/http/schema.py). Output is rendered by
sessions_app.wire."""
from rest_framework import serializers

from agentserver.http.api import (
    CursorField,
    IdField,
    StrictCharField,
    StrictIntegerField,
    directory_validator,
)

# A message as every message route renders it (sessions_app.wire.message_wire), in opencode's components.
MESSAGE_WITH_PARTS = {
    "type": "object", "required": ["info", "parts"], "additionalProperties": False,
    "properties": {"info": {"$ref": "#/components/schemas/Message"},
                   "parts": {"type": "array", "items": {"$ref": "#/components/schemas/Part"}}},
}
# The v2 session routes take the customer's spec's inputs (a prompt of parts, not opencode 1.19's
# {text, files, agents}), so they answer with messages as the original routes do, in the v2 envelope.
V2_MESSAGE = {"type": "object", "required": ["data"], "additionalProperties": False,
              "properties": {"data": MESSAGE_WITH_PARTS}}
V2_MESSAGES = {"type": "object", "required": ["data"], "additionalProperties": False,
               "properties": {"data": {"type": "array", "items": MESSAGE_WITH_PARTS}}}
V2_MESSAGE_PAGE = {"type": "object", "required": ["data", "cursor"], "additionalProperties": False,
                   "properties": {"data": {"type": "array", "items": MESSAGE_WITH_PARTS},
                                  "cursor": {"type": "object", "additionalProperties": False,
                                             "properties": {"next": {"type": "string"}}}}}

# Bounds keep huge numbers out of 64-bit database columns (an overflow would be a 500).
MAX_MS = 2**53
MAX_LIMIT = 10**9


class ModelRefField(serializers.Field):
    """`{providerID, id}` (1.18) or `{providerID, modelID}` (v1 inputs), stored as the Session's `{id, providerID}`."""

    openapi_schema = {
        "type": "object",
        "required": ["providerID"],
        "properties": {"providerID": {"type": "string", "minLength": 1}, "id": {"type": "string", "minLength": 1}},
        "anyOf": [{"required": ["id"]},
                  {"required": ["modelID"], "properties": {"modelID": {"type": "string", "minLength": 1}}}],
    }

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("Expected an object {providerID, id}")
        provider = data.get("providerID")
        model = data.get("id", data.get("modelID"))
        if not isinstance(provider, str) or not provider or not isinstance(model, str) or not model:
            raise serializers.ValidationError("Expected {providerID: string, id: string}")
        out = {"id": model, "providerID": provider}
        if isinstance(data.get("variant"), str):
            out["variant"] = data["variant"]
        return out

    def to_representation(self, value):
        return value


class PermissionRuleSerializer(serializers.Serializer):
    permission = StrictCharField(max_length=256)
    pattern = StrictCharField(max_length=4096)
    action = serializers.ChoiceField(choices=["allow", "ask", "deny"])


class SessionCreateBody(serializers.Serializer):
    parentID = IdField("ses", required=False, allow_null=True)
    title = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=1024)
    agent = StrictCharField(required=False, allow_null=True, max_length=128)
    model = ModelRefField(required=False, allow_null=True)
    permission = PermissionRuleSerializer(many=True, required=False)
    metadata = serializers.DictField(required=False)
    workspaceID = StrictCharField(required=False, allow_null=True, max_length=64)


class V2Location(serializers.Serializer):
    directory = StrictCharField(max_length=4096, validators=[directory_validator])
    workspaceID = StrictCharField(required=False, allow_null=True, max_length=64)


class V2SessionCreateBody(SessionCreateBody):
    location = V2Location(required=False)


class ArchivedTime(serializers.Serializer):
    archived = StrictIntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_MS)


class SessionUpdateBody(serializers.Serializer):
    title = StrictCharField(required=False, max_length=1024)
    time = ArchivedTime(required=False)
    permission = PermissionRuleSerializer(many=True, required=False)
    metadata = serializers.DictField(required=False)


class V2SessionUpdateBody(serializers.Serializer):
    title = StrictCharField(required=False, max_length=1024)
    archived = StrictIntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_MS)
    permission = PermissionRuleSerializer(many=True, required=False)


class SessionListQuery(serializers.Serializer):
    roots = serializers.BooleanField(required=False, default=False)
    start = serializers.IntegerField(required=False, min_value=0, max_value=MAX_MS)
    search = serializers.CharField(required=False, allow_blank=True, max_length=1024)
    limit = serializers.IntegerField(required=False, min_value=0, max_value=MAX_LIMIT)
    path = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    directory = serializers.CharField(required=False, allow_blank=True)
    workspace = serializers.CharField(required=False, allow_blank=True)
    scope = serializers.CharField(required=False, allow_blank=True)


class V2SessionListQuery(SessionListQuery):
    order = serializers.ChoiceField(choices=["asc", "desc"], required=False, default="desc")
    cursor = CursorField("time", "id", "order", required=False, allow_blank=True)
    subpath = serializers.CharField(required=False, allow_blank=True, max_length=4096)
    project = serializers.CharField(required=False, allow_blank=True, max_length=64)


class MessageListQuery(serializers.Serializer):
    limit = serializers.IntegerField(required=False, min_value=0, max_value=MAX_LIMIT)
    before = serializers.CharField(required=False, allow_blank=True, max_length=1024)
    directory = serializers.CharField(required=False, allow_blank=True)
    workspace = serializers.CharField(required=False, allow_blank=True)


class V2MessageListQuery(serializers.Serializer):
    limit = serializers.IntegerField(required=False, min_value=0, max_value=MAX_LIMIT)
    order = serializers.ChoiceField(choices=["asc", "desc"], required=False)
    cursor = CursorField("id", "order", required=False, allow_blank=True)


class ForkBody(serializers.Serializer):
    messageID = IdField("msg", required=False, allow_null=True)


def spec_response(data, inner: str):
    """The customer's spec names the v2 reply's input `response` (a PermissionReply / QuestionResponse);
    opencode 1.18 sends `reply` / `answers`. `response` may be the bare value or an object holding `inner`."""
    if not isinstance(data, dict) or "response" not in data or inner in data:
        return data
    response = data["response"]
    if isinstance(response, dict):
        return {**{k: v for k, v in data.items() if k != "response"}, **response}
    return {**{k: v for k, v in data.items() if k != "response"}, inner: response}
