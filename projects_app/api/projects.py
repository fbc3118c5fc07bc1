"""Projects: project.list, project.current, project.update, project.initGit, project.directories (original)
and project.list, project.get, project.update (v2, server kind)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.errors import BadRequest, NotFound
from agentserver.http.api import (
    PATH_MAX_LENGTHS,
    STRING,
    ApiView,
    StrictCharField,
    array,
    record,
    ref,
    takes,
)
from projects_app import projects
from projects_app.git_init import project_init_git

_MAX_PROJECT_ID = PATH_MAX_LENGTHS["projectID"]


def string(**kwargs) -> StrictCharField:
    return StrictCharField(required=False, allow_blank=True, trim_whitespace=False, **kwargs)


class ProjectIconSerializer(serializers.Serializer):
    url = string(max_length=4096)
    color = string(max_length=64)
    override = string(max_length=4096)


class ProjectCommandsSerializer(serializers.Serializer):
    """opencode's ProjectCommands: the one command it knows; other keys are dropped, as for any body."""
    start = string(max_length=10000)


class ProjectUpdateSerializer(serializers.Serializer):
    name = string(allow_null=True, max_length=255)
    icon = ProjectIconSerializer(required=False, allow_null=True)
    commands = ProjectCommandsSerializer(required=False, allow_null=True)


class ProjectCommandSerializer(serializers.Serializer):
    name = StrictCharField(max_length=255)
    command = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=10000)


class V2ProjectUpdateSerializer(serializers.Serializer):
    name = string(allow_null=True, max_length=255)
    icon = string(allow_null=True, max_length=4096)
    commands = serializers.ListField(child=ProjectCommandSerializer(), required=False, allow_null=True)


def project_id_param(value: str) -> str:
    # Project ids are root-commit SHAs or "global": anything else simply names no project.
    if not isinstance(value, str) or not value or len(value) > _MAX_PROJECT_ID:
        raise NotFound(f"Project not found: {str(value)[:_MAX_PROJECT_ID]}")
    return value


def _changes(data: dict) -> dict:
    return {key: data[key] for key in ("name", "icon", "commands") if key in data}


class ProjectListView(ApiView):
    operation_ids = {"GET": "project.list"}
    mounts = {"original": "project"}

    @takes(directory=True)
    def get(self, request):
        projects.project_of(self.context(request))  # like opencode's instance boot: the current project always exists
        return Response([projects.project_wire(p) for p in projects.project_list(user=request.user)])


class ProjectCurrentView(ApiView):
    operation_ids = {"GET": "project.current"}
    mounts = {"original": "project/current"}

    @takes(directory=True)
    def get(self, request):
        return Response(projects.project_wire(projects.project_current(context=self.context(request))))


class ProjectUpdateView(ApiView):
    operation_ids = {"PATCH": "project.update"}
    mounts = {"original": "project/<str:projectID>"}

    @takes(ProjectUpdateSerializer)
    def patch(self, request, projectID: str):
        project_id = project_id_param(projectID)
        data = self.body(request)
        project = projects.project_update(user=request.user, project_id=project_id, **_changes(data))
        return Response(projects.project_wire(project))


class ProjectInitGitView(ApiView):
    operation_ids = {"POST": "project.initGit"}
    mounts = {"original": "project/git/init"}

    @takes(directory=True)
    def post(self, request):
        return Response(projects.project_wire(project_init_git(context=self.context(request))))


class ProjectDirectoriesView(ApiView):
    operation_ids = {"GET": "project.directories"}
    mounts = {"original": "project/<str:projectID>/directories"}

    def get(self, request, projectID: str):
        if len(projectID) > _MAX_PROJECT_ID:
            raise BadRequest(f"Invalid project id: {projectID[:16]}…", kind="Params")
        return Response(projects.project_directories(user=request.user, project_id=projectID))


# projects.project_wire_v2: opencode's Project with the icon as a string and every command as {name, command}.
PROJECT_V2 = record({"id": STRING, "worktree": STRING, "time": ref("ProjectTime"), "sandboxes": array(STRING),
                     "commands": array(record({"name": STRING, "command": STRING}))},
                    {"vcs": ref("ProjectVcs"), "name": STRING, "icon": STRING})


class V2ProjectListView(ApiView):
    operation_ids = {"GET": "project.list"}
    mounts = {"v2": "project"}
    answer_schemas = {"GET": array(PROJECT_V2)}

    def get(self, request):
        return Response([projects.project_wire_v2(p) for p in projects.project_list(user=request.user)])


class V2ProjectView(ApiView):
    operation_ids = {"GET": "project.get", "PATCH": "project.update"}
    mounts = {"v2": "project/<str:projectID>"}
    answer_schemas = {"GET": PROJECT_V2, "PATCH": PROJECT_V2}

    def get(self, request, projectID: str):
        project = projects.project_get(user=request.user, project_id=project_id_param(projectID))
        return Response(projects.project_wire_v2(project))

    @takes(V2ProjectUpdateSerializer)
    def patch(self, request, projectID: str):
        project_id = project_id_param(projectID)
        data = self.body(request)
        project = projects.project_update(user=request.user, project_id=project_id, **_changes(data))
        return Response(projects.project_wire_v2(project))
