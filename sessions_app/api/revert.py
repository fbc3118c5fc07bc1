"""session.revert / session.unrevert / session.diff (original) and v2 session.diff, session.revert.stage /
.clear / .commit (reference §5.7)."""
from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    ApiView,
    IdField,
    StrictBooleanField,
    array,
    enveloped,
    ref,
    succeeds_with,
    takes,
)
from sessions_app.api.sessions import session_from_path
from sessions_app.runtime import session_diff
from sessions_app.services import revert as revert_service
from sessions_app.wire import session_wire


class RevertBody(serializers.Serializer):
    messageID = IdField("msg")
    partID = IdField("prt", required=False)


class DiffQuery(serializers.Serializer):
    messageID = IdField("msg", required=False)


def diffs_of(view: ApiView, request, sessionID: str) -> list[dict]:
    session = session_from_path(request, sessionID)
    message_id = view.query(request).get("messageID")
    if message_id:
        return session_diff.turn_diff(session=session, message_id=message_id)
    return session_diff.whole_diff(session=session)


class RevertView(ApiView):
    operation_ids = {"POST": "session.revert"}
    mounts = {"original": "session/<str:sessionID>/revert"}
    answers = (409,)

    @takes(RevertBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        session = revert_service.session_revert(session=session, message_id=body["messageID"],
                                                part_id=body.get("partID"))
        return Response(session_wire(session))


class UnrevertView(ApiView):
    operation_ids = {"POST": "session.unrevert"}
    mounts = {"original": "session/<str:sessionID>/unrevert"}
    answers = (409,)

    def post(self, request, sessionID: str):
        session = revert_service.session_unrevert(session=session_from_path(request, sessionID))
        return Response(session_wire(session))


class DiffView(ApiView):
    operation_ids = {"GET": "session.diff"}
    mounts = {"original": "session/<str:sessionID>/diff"}

    @takes(query=DiffQuery)
    def get(self, request, sessionID: str):
        return Response(diffs_of(self, request, sessionID))


class V2DiffView(ApiView):
    operation_ids = {"GET": "session.diff"}
    mounts = {"v2": "session/<str:sessionID>/diff"}
    answer_schemas = {"GET": enveloped(array(ref("SnapshotFileDiff")))}

    @takes(query=DiffQuery)
    def get(self, request, sessionID: str):
        return Response({"data": diffs_of(self, request, sessionID)})


class RevertStageBody(serializers.Serializer):
    messageID = IdField("msg")
    files = StrictBooleanField(required=False, default=True)


class V2RevertStageView(ApiView):
    operation_ids = {"POST": "session.revert.stage"}
    mounts = {"v2": "session/<str:sessionID>/revert/stage"}
    answers = (409,)

    @takes(RevertStageBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        session = revert_service.session_revert(session=session, message_id=body["messageID"], files=body["files"],
                                                must_exist=True)
        return Response({"data": session.revert})


class V2RevertClearView(ApiView):
    operation_ids = {"POST": "session.revert.clear"}
    mounts = {"v2": "session/<str:sessionID>/revert/clear"}
    answers = (409,)

    @succeeds_with(204)
    def post(self, request, sessionID: str):
        revert_service.session_unrevert(session=session_from_path(request, sessionID))
        return Response(status=204)


class V2RevertCommitView(ApiView):
    operation_ids = {"POST": "session.revert.commit"}
    mounts = {"v2": "session/<str:sessionID>/revert/commit"}
    answers = (409,)

    @succeeds_with(204)
    def post(self, request, sessionID: str):
        revert_service.session_revert_commit(session=session_from_path(request, sessionID))
        return Response(status=204)
