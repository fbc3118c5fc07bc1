"""GET /api/audit (audit.list): the audit log, newest first, for staff only; the same filters as the
admin's list, cursor-paginated."""
from rest_framework import serializers

from agentserver.http.api import (
    ApiView,
    CursorField,
    array,
    decode_cursor,
    encode_cursor,
    page,
    record,
    takes,
)
from audit_app import selectors
from audit_app.chain import micros
from audit_app.log import OUTCOMES, as_json


class AuditQuery(serializers.Serializer):
    person = serializers.CharField(required=False, allow_blank=True, max_length=150)
    action = serializers.CharField(required=False, allow_blank=True, max_length=64)
    object = serializers.CharField(required=False, allow_blank=True, max_length=270)
    session = serializers.CharField(required=False, allow_blank=True, max_length=64)
    outcome = serializers.ChoiceField(choices=OUTCOMES, required=False)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    q = serializers.CharField(required=False, allow_blank=True, max_length=200)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=selectors.MAX_LIMIT)
    cursor = CursorField("time", "id", required=False, allow_blank=True)


STRING, INTEGER = {"type": "string"}, {"type": "integer"}
NULLABLE_STRING, NULLABLE_INTEGER = {"type": ["string", "null"]}, {"type": ["integer", "null"]}
AUDIT_RECORD = record({
    "id": INTEGER, "time": STRING, "action": STRING, "outcome": {"enum": list(OUTCOMES)},
    "actor": record({"person": NULLABLE_INTEGER, "name": STRING, "token": NULLABLE_INTEGER, "address": STRING,
                     "userAgent": STRING, "session": NULLABLE_STRING, "description": STRING}),
    "object": record({"type": STRING, "id": STRING}), "session": NULLABLE_STRING, "details": {"type": "object"},
    "hash": STRING, "prevHash": STRING,
})
AUDIT_PAGE = record({"data": array(AUDIT_RECORD), "cursor": record({}, {"next": STRING})})


class AuditListView(ApiView):
    """Staff only: anyone else is refused (403) before the query is read."""

    operation_ids = {"GET": "audit.list"}
    mounts = {"v2": "audit"}
    answer_schemas = {"GET": AUDIT_PAGE}

    @takes(query=AuditQuery)
    def get(self, request):
        selectors.check_reader(viewer=request.user)  # before the query is read: a 403, not a 400
        query = self.query(request)
        before = int(decode_cursor(query["cursor"], "time", "id")["id"]) if query.get("cursor") else None
        filters = selectors.AuditFilters(**{name: query.get(name) or None for name in (
            "person", "action", "object", "session", "outcome", "since", "until", "q")})
        rows, next_id = selectors.audit_page(viewer=request.user, filters=filters, before_id=before, limit=query.get("limit") or 100)
        next_cursor = None
        if next_id is not None:
            next_cursor = encode_cursor({"time": micros(rows[-1].time) // 1000, "id": next_id})
        return page([as_json(row) for row in rows], next_cursor)
