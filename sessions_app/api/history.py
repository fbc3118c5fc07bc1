"""A session's logged events: session.history (v2; its stream, session.events, is in server/api/events.py
with the other event streams)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import ApiView, takes
from sessions_app import selectors
from sessions_app.api.sessions import session_from_path


class HistoryQuery(serializers.Serializer):
    limit = serializers.IntegerField(required=False, min_value=1, max_value=selectors.HISTORY_MAX_LIMIT)
    after = serializers.IntegerField(required=False, min_value=0)


class V2SessionHistoryView(ApiView):
    operation_ids = {"GET": "session.history"}
    mounts = {"v2": "session/<str:sessionID>/history"}

    @takes(query=HistoryQuery)
    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        query = self.query(request)
        events, more = selectors.session_history(session=session, after=query.get("after") or 0,
                                                 limit=query.get("limit"))
        return Response({"data": events, "hasMore": more})
