"""project.list, project.current, project.update (original) and project.get/list/update (v2, server kind)."""
from rest_framework.response import Response

from agentserver.api import ApiView, parse
from agentserver.errors import NotFound
from projects_app import projects
from projects_app.api.serializers import ProjectUpdateSerializer, V2ProjectUpdateSerializer

_MAX_PROJECT_ID = 128


def project_id_param(value: str) -> str:
    # Project ids are root-commit SHAs or "global": anything else simply names no project.
    if not isinstance(value, str) or not value or len(value) > _MAX_PROJECT_ID:
        raise NotFound(f"Project not found: {str(value)[:_MAX_PROJECT_ID]}")
    return value


def _changes(data: dict) -> dict:
    return {key: data[key] for key in ("name", "icon", "commands") if key in data}


class ProjectListView(ApiView):
    operation_ids = {"GET": "project.list"}

    def get(self, request):
        self.context(request).project()  # like opencode's instance boot: the current project always exists
        return Response([projects.project_wire(p) for p in projects.project_list(user=request.user)])


class ProjectCurrentView(ApiView):
    operation_ids = {"GET": "project.current"}

    def get(self, request):
        return Response(projects.project_wire(projects.project_current(context=self.context(request))))


class ProjectUpdateView(ApiView):
    operation_ids = {"PATCH": "project.update"}

    def patch(self, request, projectID: str):
        project_id = project_id_param(projectID)
        data = parse(ProjectUpdateSerializer, request.data)
        project = projects.project_update(user=request.user, project_id=project_id, **_changes(data))
        return Response(projects.project_wire(project))


class V2ProjectListView(ApiView):
    operation_ids = {"GET": "project.list"}

    def get(self, request):
        return Response([projects.project_wire_v2(p) for p in projects.project_list(user=request.user)])


class V2ProjectView(ApiView):
    operation_ids = {"GET": "project.get", "PATCH": "project.update"}

    def get(self, request, projectID: str):
        project = projects.project_get(user=request.user, project_id=project_id_param(projectID))
        return Response(projects.project_wire_v2(project))

    def patch(self, request, projectID: str):
        project_id = project_id_param(projectID)
        data = parse(V2ProjectUpdateSerializer, request.data)
        project = projects.project_update(user=request.user, project_id=project_id, **_changes(data))
        return Response(projects.project_wire_v2(project))
