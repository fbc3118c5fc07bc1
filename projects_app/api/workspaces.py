"""Workspaces: the v2 workspace.* routes (server kind: no runtime context; meanings of status and sync:
projects_app/workspaces.py) but workspace.warp (a session's move: sessions_app/api/workspaces.py), and 1.18's
experimental.workspace.* of the context's project (list, create, status, remove, adapter.list, syncList; warp is
sessions_app's)."""
from django.core.validators import RegexValidator
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import (
    BOOLEAN,
    INTEGER,
    NULLABLE_STRING,
    NUMBER,
    OBJECT,
    STRING,
    TIMES,
    ApiView,
    IdField,
    StrictBooleanField,
    StrictCharField,
    array,
    directory_validator,
    id_param,
    record,
    succeeds_with,
    takes,
)
from projects_app import workspaces


class WorkspaceCreateInput(serializers.Serializer):
    # workspaces.workspace_create: a directory to register, or for a worktree its project's id instead.
    openapi_rules = {"anyOf": [{"required": ["directory"]},
                               {"required": ["projectID"],
                                "properties": {"type": {"enum": list(workspaces.WORKTREE_TYPES)}}}]}

    type = serializers.ChoiceField(choices=workspaces.REGISTER_TYPES + workspaces.WORKTREE_TYPES)
    projectID = StrictCharField(max_length=128, required=False)
    name = StrictCharField(max_length=255, required=False)
    directory = StrictCharField(max_length=4096, required=False, validators=[directory_validator])
    metadata = serializers.DictField(required=False)
    branch = StrictCharField(max_length=255, required=False,
                             validators=[RegexValidator(workspaces.BRANCH_PATTERN, message="Invalid branch name")])


class WorkspaceUpdateInput(serializers.Serializer):
    name = StrictCharField(max_length=255, required=False)
    metadata = serializers.DictField(required=False)
    archived = StrictBooleanField(required=False)


class WorkspaceListQuery(serializers.Serializer):
    projectID = serializers.CharField(max_length=128, required=False)


class WorkspaceDeleteQuery(serializers.Serializer):
    removeFiles = serializers.BooleanField(required=False, default=False)


# workspaces.workspace_wire: 1.18's Workspace, and our metadata, archived, createdByServer and times.
WORKSPACE = record({"id": STRING, "type": STRING, "name": STRING, "branch": NULLABLE_STRING,
                    "directory": NULLABLE_STRING, "extra": {"type": ["object", "null"]}, "projectID": STRING,
                    "timeUsed": NUMBER, "metadata": OBJECT, "archived": BOOLEAN, "createdByServer": BOOLEAN,
                    "time": TIMES})
WORKSPACE_REMOVED = {"allOf": [{**WORKSPACE, "additionalProperties": True}, record(
    {"removed": record({"registration": BOOLEAN, "files": BOOLEAN, "sessionsDetached": INTEGER})}, closed=False)]}
WORKSPACE_STATUS = record({"workspaceID": STRING, "id": STRING, "directory": STRING, "exists": BOOLEAN,
                           "status": STRING},
                          {"branch": NULLABLE_STRING, "dirty": {"type": ["integer", "null"]},
                           "ahead": {"type": ["integer", "null"]}, "behind": {"type": ["integer", "null"]},
                           "error": STRING}, closed=False)


class WorkspaceListView(ApiView):
    operation_ids = {"GET": "workspace.list", "POST": "workspace.create"}
    mounts = {"v2": "workspace"}
    answer_schemas = {"GET": array(WORKSPACE), "POST": WORKSPACE}
    answers = (409,)

    @takes(query=WorkspaceListQuery)
    def get(self, request):
        query = self.query(request)
        rows = workspaces.workspace_list(user=request.user, project_id=query.get("projectID"))
        return Response([workspaces.workspace_wire(w) for w in rows])

    @takes(WorkspaceCreateInput)
    def post(self, request):
        data = self.body(request)
        workspace = workspaces.workspace_create(
            user=request.user, type=data["type"], project_id=data.get("projectID"), name=data.get("name"),
            directory=data.get("directory"), metadata=data.get("metadata"), branch=data.get("branch"),
        )
        return Response(workspaces.workspace_wire(workspace))


class WorkspaceItemView(ApiView):
    operation_ids = {"GET": "workspace.get", "PATCH": "workspace.update", "DELETE": "workspace.delete"}
    mounts = {"v2": "workspace/<str:workspaceID>"}
    answer_schemas = {"GET": WORKSPACE, "PATCH": WORKSPACE, "DELETE": WORKSPACE_REMOVED}
    answers = (409,)  # removeFiles on a directory the server did not create

    def get(self, request, workspaceID: str):
        workspace = workspaces.workspace_get(user=request.user,
                                             workspace_id=id_param(workspaceID, "wrk", "workspace"))
        return Response(workspaces.workspace_wire(workspace))

    @takes(WorkspaceUpdateInput)
    def patch(self, request, workspaceID: str):
        workspace_id = id_param(workspaceID, "wrk", "workspace")
        data = self.body(request)
        workspace = workspaces.workspace_update(user=request.user, workspace_id=workspace_id, name=data.get("name"),
                                                metadata=data.get("metadata"), archived=data.get("archived"))
        return Response(workspaces.workspace_wire(workspace))

    @takes(query=WorkspaceDeleteQuery)
    def delete(self, request, workspaceID: str):
        workspace_id = id_param(workspaceID, "wrk", "workspace")
        query = self.query(request)
        return Response(workspaces.workspace_delete(user=request.user, workspace_id=workspace_id,
                                                    remove_files=query["removeFiles"]))


class WorkspaceStatusView(ApiView):
    operation_ids = {"GET": "workspace.status"}
    mounts = {"v2": "workspace/status"}
    answer_schemas = {"GET": array(WORKSPACE_STATUS)}

    def get(self, request):
        return Response(workspaces.workspace_status(user=request.user))


class WorkspaceSyncView(ApiView):
    operation_ids = {"POST": "workspace.sync"}
    mounts = {"v2": "workspace/sync"}
    answer_schemas = {"POST": record({"pruned": array(STRING), "registered": array(WORKSPACE),
                                          "workspaces": array(WORKSPACE)}, closed=False)}

    def post(self, request):
        return Response(workspaces.workspace_sync(user=request.user))


# ---- 1.18's experimental routes (original mount) -----------------------------------------------------

class ExperimentalWorkspaceView(ApiView):
    operation_ids = {"GET": "experimental.workspace.list"}

    @takes(directory=True)
    def get(self, request):
        return Response(workspaces.project_workspaces(context=self.context(request)))


class ExperimentalWorkspaceStatusView(ApiView):
    operation_ids = {"GET": "experimental.workspace.status"}
    mounts = {"original": "experimental/workspace/status"}

    @takes(directory=True)
    def get(self, request):
        return Response(workspaces.project_workspace_status(context=self.context(request)))


class ExperimentalWorkspaceCreateInput(serializers.Serializer):
    openapi_rules = {"not": {"required": ["id"]}}  # the view refuses any id: this server names its workspaces

    id = IdField("wrk", required=False)
    type = serializers.ChoiceField(choices=workspaces.REGISTER_TYPES + workspaces.WORKTREE_TYPES)
    branch = StrictCharField(max_length=255, required=False, allow_null=True,
                             validators=[RegexValidator(workspaces.BRANCH_PATTERN, message="Invalid branch name")])
    extra = serializers.JSONField(required=False, allow_null=True)


class ExperimentalWorkspaceCollectionView(ExperimentalWorkspaceView):
    operation_ids = {"GET": "experimental.workspace.list", "POST": "experimental.workspace.create"}
    mounts = {"original": "experimental/workspace"}
    answers = (409,)

    @takes(ExperimentalWorkspaceCreateInput, directory=True)
    def post(self, request):
        data = self.body(request)
        if data.get("id"):
            raise BadRequest("id: this server names its workspaces; leave id out", kind="Body",
                             issues=[{"path": ["id"], "message": "chosen by the server"}])
        return Response(workspaces.project_workspace_create(context=self.context(request), type=data["type"],
                                                            branch=data.get("branch"), extra=data.get("extra")))


class ExperimentalWorkspaceAdapterView(ApiView):
    operation_ids = {"GET": "experimental.workspace.adapter.list"}
    mounts = {"original": "experimental/workspace/adapter"}

    @takes(directory=True)
    def get(self, request):
        self.context(request)
        return Response(workspaces.workspace_adapters())


class ExperimentalWorkspaceSyncListView(ApiView):
    operation_ids = {"POST": "experimental.workspace.syncList"}
    mounts = {"original": "experimental/workspace/sync-list"}

    @takes(directory=True)
    @succeeds_with(204)
    def post(self, request):
        self.context(request)
        workspaces.workspace_sync(user=request.user)
        return Response(status=204)


class ExperimentalWorkspaceItemView(ApiView):
    operation_ids = {"DELETE": "experimental.workspace.remove"}
    mounts = {"original": "experimental/workspace/<str:id>"}
    path_ids = {"id": "wrk"}

    @takes(directory=True)
    def delete(self, request, id: str):
        workspace_id = id_param(id, "wrk", "workspace")
        return Response(workspaces.project_workspace_remove(context=self.context(request), workspace_id=workspace_id))
