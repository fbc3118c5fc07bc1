"""usage.list: GET /api/usage — usage summed over a period, grouped, as JSON, CSV or JSON lines."""
from django.http import HttpResponse
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    INTEGER,
    NUMBER,
    STRING,
    ApiView,
    IdField,
    array,
    record,
    takes,
)
from usage_app import export, selectors
from usage_app.periods import parse_instant

NAME = {"max_length": 255, "required": False, "trim_whitespace": False}


class InstantField(serializers.CharField):
    """An ISO date (midnight in the usage time zone), an ISO date-time, or milliseconds since the epoch."""
    openapi_schema = {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"},
                                {"type": "string", "pattern": r"^\d{1,13}$"}]}

    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        try:
            if len(text) > 64:
                raise ValueError("too long")
            return parse_instant(text)
        except ValueError:
            raise serializers.ValidationError(
                f"Expected an ISO date, an ISO date-time or milliseconds, got {str(data)[:80]!r}") from None


class UsageQuery(serializers.Serializer):
    since = InstantField(required=False)
    until = InstantField(required=False)
    person = serializers.CharField(**NAME)
    group = serializers.CharField(**NAME)
    provider = serializers.CharField(**NAME)
    model = serializers.CharField(**NAME)
    session = IdField("ses", required=False)
    group_by = serializers.ChoiceField(choices=list(selectors.GROUPINGS), required=False)
    format = serializers.ChoiceField(choices=["json", "csv", "jsonl"], required=False, default="json")


USAGE_ROW = record({
    "calls": INTEGER, "failedCalls": INTEGER, "unpricedCalls": INTEGER, "unreportedCalls": INTEGER,
    "tokens": record({"input": INTEGER, "output": INTEGER, "reasoning": INTEGER,
                      "cache": record({"read": INTEGER, "write": INTEGER})}),
    "cost": NUMBER, "durationMs": INTEGER,
}, {"day": STRING, "personID": INTEGER, "person": {"type": ["string", "null"]}, "providerID": STRING,
    "modelID": STRING, "sessionID": STRING})


class UsageView(ApiView):
    """Model calls summed: the caller's own, or anyone's for staff (`person`, `group`)."""
    operation_ids = {"GET": "usage.list"}
    mounts = {"v2": "usage"}
    answer_schemas = {"GET": record({"data": array(USAGE_ROW)})}
    answer_media_types = {"GET": {"text/csv": {"type": "string"}, "application/x-ndjson": {"type": "string"}}}

    @takes(query=UsageQuery)
    def get(self, request):
        query = self.query(request)
        wanted = selectors.UsageFilter(
            since=query.get("since"), until=query.get("until"), person=query.get("person"),
            group=query.get("group"), provider_id=query.get("provider"), model_id=query.get("model"),
            session_id=query.get("session"))
        group_by = query.get("group_by")
        rows = selectors.usage_summary(viewer=request.user, wanted=wanted, group_by=group_by)
        if query["format"] == "csv":
            return HttpResponse(export.as_csv(rows, group_by), content_type="text/csv; charset=utf-8",
                                headers={"Content-Disposition": 'attachment; filename="usage.csv"'})
        if query["format"] == "jsonl":
            return HttpResponse(export.as_json_lines(rows), content_type="application/x-ndjson")
        return Response({"data": rows})
