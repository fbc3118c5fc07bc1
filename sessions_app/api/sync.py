"""1.18's sync.* and experimental.controlPlane.moveSession: opencode syncs sessions between machines through
event histories; here a session lives in the server's database and moves between a project's directories.
sync.history.list reads the sessions' logged events, sync.steal moves a session into the request's workspace,
controlPlane.moveSession into a workspace by its directory; sync.start has no loop to start and sync.replay no
history to import, and both say so."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.errors import Forbidden
from agentserver.http.api import (
    ApiView,
    IdField,
    StrictBooleanField,
    StrictCharField,
    json_integer,
    succeeds_with,
    takes,
)
from sessions_app import selectors
from sessions_app.services.workspaces import session_move, workspace_warp


class StealBody(serializers.Serializer):
    sessionID = IdField("ses")


class Destination(serializers.Serializer):
    directory = StrictCharField(max_length=4096)


class MoveBody(serializers.Serializer):
    sessionID = IdField("ses")
    destination = Destination()
    moveChanges = StrictBooleanField(required=False, default=False)


class ReplayEvent(serializers.Serializer):
    id = StrictCharField(max_length=64)
    aggregateID = StrictCharField(max_length=64)
    seq = serializers.IntegerField(min_value=0)
    type = StrictCharField(max_length=128)
    data = serializers.DictField()


class ReplayBody(serializers.Serializer):
    directory = StrictCharField(max_length=4096)
    events = serializers.ListField(child=ReplayEvent(), max_length=100_000)


class SyncStartView(ApiView):
    """Workspaces here are directories of this server that every worker sees: there is no sync loop to start."""

    operation_ids = {"POST": "sync.start"}
    mounts = {"original": "sync/start"}

    @takes(directory=True)
    def post(self, request):
        self.context(request)
        return Response(False)


class SyncReplayView(ApiView):
    operation_ids = {"POST": "sync.replay"}
    mounts = {"original": "sync/replay"}

    @takes(ReplayBody, directory=True)
    def post(self, request):
        self.body(request)
        self.context(request)
        # Well-formed, and refused whatever it holds: a 403 says so (a 400 would blame the input).
        raise Forbidden("This server does not import opencode sync histories: its sessions are records of its own "
                        "database, made by its own prompts (create a session with session.create)")


class SyncStealView(ApiView):
    operation_ids = {"POST": "sync.steal"}
    mounts = {"original": "sync/steal"}
    answers = (409,)
    allow_workspace = True

    @takes(StealBody, directory=True)
    def post(self, request):
        body = self.body(request)
        context = self.context(request)
        session, _ = workspace_warp(user=request.user, session_id=body["sessionID"],
                                    workspace_id=context.workspace_id, copy_changes=False)
        return Response({"sessionID": session.id})


class KnownSequenceBody(serializers.Serializer):
    """sessionID → the last sequence number the client has of it (a 64-bit log id)."""

    openapi_schema = classmethod(lambda cls, auto_schema, direction: {
        "type": "object", "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}})

    def to_internal_value(self, data):
        whole = {key: json_integer(value) for key, value in data.items()}
        wrong = [key for key, value in whole.items() if value is None or not 0 <= value < 2**63]
        if wrong:
            raise serializers.ValidationError({key: ["Expected a sequence number (integer ≥ 0)"] for key in wrong})
        return whole


class SyncHistoryView(ApiView):
    """The logged events of the caller's sessions in the request's directory: for each session named in the
    body (sessionID → last known seq) those after it, for the others all that the log keeps."""

    operation_ids = {"POST": "sync.history.list"}
    mounts = {"original": "sync/history"}

    @takes(KnownSequenceBody, directory=True)
    def post(self, request):
        known = self.body(request)
        context = self.context(request)
        return Response(selectors.sync_history(user=request.user, directory=context.directory, known=known))


class MoveSessionView(ApiView):
    operation_ids = {"POST": "experimental.controlPlane.moveSession"}
    mounts = {"original": "experimental/control-plane/move-session"}
    answers = (409,)

    @takes(MoveBody)
    @succeeds_with(204)
    def post(self, request):
        body = self.body(request)
        session_move(user=request.user, session_id=body["sessionID"], destination=body["destination"]["directory"],
                     move_changes=body["moveChanges"])
        return Response(status=204)
