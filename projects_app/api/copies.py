"""Project copies: v2.projectCopy.create / .remove / .refresh and experimental.projectCopy.generateName (on the
original mount, as opencode serves them) over projects_app.copies."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    LocatedView,
    StrictBooleanField,
    StrictCharField,
    directory_validator,
    succeeds_with,
    takes,
)
from projects_app import copies


class CopyCreateBody(serializers.Serializer):
    strategy = serializers.ChoiceField(choices=sorted(copies.STRATEGIES))
    directory = StrictCharField(max_length=4096, validators=[directory_validator])
    name = StrictCharField(max_length=255, required=False)


class CopyRemoveBody(serializers.Serializer):
    directory = StrictCharField(max_length=4096, validators=[directory_validator])
    force = StrictBooleanField(required=False, default=False)


class GenerateNameBody(serializers.Serializer):
    context = StrictCharField(max_length=100_000, required=False, allow_blank=True)


class ProjectCopyView(LocatedView):
    operation_ids = {"POST": "v2.projectCopy.create", "DELETE": "v2.projectCopy.remove"}
    mounts = {"original": "experimental/project/<str:projectID>/copy"}
    answers = (409,)

    @takes(CopyCreateBody, directory=True)
    def post(self, request, projectID: str):
        body = self.body(request)
        return Response(copies.copy_create(context=self.context(request), project_id=projectID,
                                           strategy=body["strategy"], directory=body["directory"],
                                           name=body.get("name")))

    @takes(CopyRemoveBody, directory=True)
    @succeeds_with(204)
    def delete(self, request, projectID: str):
        body = self.body(request)
        copies.copy_remove(context=self.context(request), project_id=projectID, directory=body["directory"],
                           force=body["force"])
        return Response(status=204)


class ProjectCopyRefreshView(LocatedView):
    operation_ids = {"POST": "v2.projectCopy.refresh"}
    mounts = {"original": "experimental/project/<str:projectID>/copy/refresh"}
    answers = (409,)

    @takes(directory=True)
    @succeeds_with(204)
    def post(self, request, projectID: str):
        copies.copy_refresh(context=self.context(request), project_id=projectID)
        return Response(status=204)


class ProjectCopyNameView(LocatedView):
    operation_ids = {"POST": "experimental.projectCopy.generateName"}
    mounts = {"original": "experimental/project/<str:projectID>/copy/generate-name"}

    @takes(GenerateNameBody, directory=True)
    def post(self, request, projectID: str):
        body = self.body(request)
        copies.copy_project(context=self.context(request), project_id=projectID)
        return Response({"name": copies.copy_name(context=body.get("context"))})
