"""Permission requests: permission.list, permission.reply, permission.respond (original) and
permission.list, permission.reply, permission.request.list, session.permission.list/.create/.get/.reply,
permission.saved.list/.remove (v2): list the caller's pending requests, ask and answer them, and the
approvals remembered from `always` replies. A pending request's views are api/pending.py's."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    ApiView,
    IdField,
    StrictCharField,
    V2RequestView,
    id_param,
    opencode,
    succeeds_with,
    takes,
)
from sessions_app.api.pending import (
    PendingListView,
    PendingReplyView,
    PendingRequestListView,
    PendingSessionListView,
    PendingSessionReplyView,
    PendingView,
    V2PendingReplyView,
)
from sessions_app.api.sessions import session_from_path
from sessions_app.selectors import session_get
from sessions_app.services import pending, permissions

REPLY_ERROR = 'Expected "once" | "always" | "reject"'


class ReplyBody(serializers.Serializer):
    reply = serializers.ChoiceField(choices=permissions.REPLIES, error_messages={"invalid_choice": REPLY_ERROR})
    message = StrictCharField(required=False, allow_blank=True, max_length=100_000)


class RespondBody(serializers.Serializer):
    response = serializers.ChoiceField(choices=permissions.REPLIES, error_messages={"invalid_choice": REPLY_ERROR})


class PermissionView(PendingView):
    """What every permission view of api/pending.py is given."""

    answering = permissions.ANSWERING
    reply_body = ReplyBody
    reply_field = "reply"

    @staticmethod
    def v2_wire(request: dict) -> dict:
        """The v2 routes name a permission's fields otherwise: action, resources, save, source."""
        out = {"id": request["id"], "sessionID": request["sessionID"], "action": request["permission"],
               "resources": request["patterns"], "save": request.get("always") or [],
               "metadata": request.get("metadata") or {}}
        tool = request.get("tool")
        if isinstance(tool, dict) and tool.get("messageID") and tool.get("callID"):
            out["source"] = {"type": "tool", "messageID": tool["messageID"], "callID": tool["callID"]}
        return out


class PermissionListView(PermissionView, PendingListView):
    operation_ids = {"GET": "permission.list"}
    mounts = {"original": "permission"}


class PermissionReplyView(PermissionView, PendingReplyView):
    operation_ids = {"POST": "permission.reply"}
    mounts = {"original": "permission/<str:requestID>/reply"}


class PermissionRespondView(ApiView):
    """The seed's route: POST /session/{sessionID}/permissions/{permissionID} {response}."""

    operation_ids = {"POST": "permission.respond"}
    mounts = {"original": "session/<str:sessionID>/permissions/<str:permissionID>"}

    @takes(RespondBody)
    def post(self, request, sessionID: str, permissionID: str):
        session_id = id_param(sessionID, "ses", "session")
        request_id = id_param(permissionID, "per", "permission")
        body = self.body(request)
        session_get(user=request.user, session_id=session_id)
        return Response(permissions.permission_reply(user=request.user, request_id=request_id,
                                                     reply=body["response"], session_id=session_id))


# ---- v2 -----------------------------------------------------------------------------------------------

class V2PermissionListView(V2RequestView, PermissionListView):
    operation_ids = {"GET": "permission.list"}
    mounts = {"v2": "permission"}
    answer_schemas = {"GET": opencode("GET /permission")}


class V2PermissionReplyView(PermissionView, V2PendingReplyView):
    operation_ids = {"POST": "permission.reply"}
    mounts = {"v2": "permission/<str:permissionID>/reply"}


class V2PermissionRequestListView(PermissionView, PendingRequestListView):
    operation_ids = {"GET": "permission.request.list"}
    mounts = {"v2": "permission/request"}


class PermissionSource(serializers.Serializer):
    type = serializers.ChoiceField(choices=["tool"], error_messages={"invalid_choice": 'Expected "tool"'})
    messageID = IdField("msg")
    callID = StrictCharField(max_length=256)


class PermissionCreateBody(serializers.Serializer):
    id = IdField("per", required=False)
    action = StrictCharField(max_length=128)
    resources = serializers.ListField(child=StrictCharField(max_length=4096, allow_blank=True), max_length=256)
    save = serializers.ListField(child=StrictCharField(max_length=4096, allow_blank=True), max_length=256,
                                 required=False)
    metadata = serializers.DictField(required=False)
    source = PermissionSource(required=False)
    agent = StrictCharField(max_length=128, required=False)


class SavedListQuery(serializers.Serializer):
    projectID = StrictCharField(max_length=64, required=False)


class V2SessionPermissionsView(PermissionView, PendingSessionListView):
    """The pending permission requests of one session, and asking a new one (v2)."""

    operation_ids = {"GET": "session.permission.list", "POST": "session.permission.create"}
    mounts = {"v2": "session/<str:sessionID>/permission"}

    @takes(PermissionCreateBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        return Response({"data": permissions.permission_create(
            session=session, action=body["action"], resources=body["resources"], save=body.get("save"),
            metadata=body.get("metadata"), source=body.get("source"), agent=body.get("agent"),
            request_id=body.get("id"))})


class V2SessionPermissionView(PermissionView):
    operation_ids = {"GET": "session.permission.get"}
    mounts = {"v2": "session/<str:sessionID>/permission/<str:requestID>"}

    def get(self, request, sessionID: str, requestID: str):
        session, request_id = self.in_session(request, sessionID, requestID)
        return Response({"data": self.v2_wire(pending.request_get(self.answering, session=session,
                                                                  request_id=request_id))})


class V2SessionPermissionReplyView(PermissionView, PendingSessionReplyView):
    operation_ids = {"POST": "session.permission.reply"}
    mounts = {"v2": "session/<str:sessionID>/permission/<str:requestID>/reply"}


class V2SavedPermissionListView(ApiView):
    operation_ids = {"GET": "permission.saved.list"}
    mounts = {"v2": "permission/saved"}

    @takes(query=SavedListQuery)
    def get(self, request):
        query = self.query(request)
        return Response({"data": permissions.saved_list(user=request.user, project_id=query.get("projectID"))})


class V2SavedPermissionView(ApiView):
    operation_ids = {"DELETE": "permission.saved.remove"}
    mounts = {"v2": "permission/saved/<str:id>"}

    @succeeds_with(204)
    def delete(self, request, id: str):
        permissions.saved_remove(user=request.user, approval_id=id)
        return Response(status=204)
