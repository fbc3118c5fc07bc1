"""workspace.warp (v2, server kind) and 1.18's experimental.workspace.warp: move a session into a workspace or
back (sessions_app/services/workspaces.py). The other workspace.* routes are projects_app's."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    ApiView,
    IdField,
    StrictBooleanField,
    record,
    ref,
    succeeds_with,
    takes,
)
from sessions_app.services.workspaces import workspace_warp
from sessions_app.wire import session_wire


class WorkspaceWarpInput(serializers.Serializer):
    sessionID = IdField("ses")
    workspaceID = IdField("wrk", required=False, allow_null=True)
    copyChanges = StrictBooleanField()


class WorkspaceWarpView(ApiView):
    operation_ids = {"POST": "workspace.warp"}
    mounts = {"v2": "workspace/warp"}
    answer_schemas = {"POST": record({"session": ref("Session"), "copied": {"type": ["object", "null"]}})}
    answers = (409,)

    @takes(WorkspaceWarpInput)
    def post(self, request):
        data = self.body(request)
        session, copied = workspace_warp(user=request.user, session_id=data["sessionID"],
                                         workspace_id=data.get("workspaceID"), copy_changes=data["copyChanges"])
        return Response({"session": session_wire(session), "copied": copied})


class ExperimentalWarpInput(serializers.Serializer):
    id = IdField("wrk", allow_null=True)
    sessionID = IdField("ses")
    copyChanges = StrictBooleanField(required=False, default=False)


class ExperimentalWarpView(ApiView):
    operation_ids = {"POST": "experimental.workspace.warp"}
    mounts = {"original": "experimental/workspace/warp"}
    answers = (409,)

    @takes(ExperimentalWarpInput)
    @succeeds_with(204)
    def post(self, request):
        data = self.body(request)
        workspace_warp(user=request.user, session_id=data["sessionID"], workspace_id=data["id"],
                       copy_changes=data["copyChanges"])
        return Response(status=204)
