"""/experimental/worktree: worktree.list, worktree.create, worktree.remove, worktree.reset (projects_app.worktrees)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import ApiView, StrictCharField, takes
from projects_app import worktrees


class WorktreeCreateBody(serializers.Serializer):
    name = StrictCharField(required=False, max_length=100)
    startCommand = StrictCharField(required=False, max_length=10_000)


class WorktreeDirectoryBody(serializers.Serializer):
    directory = StrictCharField(max_length=4096)


class WorktreeView(ApiView):
    operation_ids = {"GET": "worktree.list", "POST": "worktree.create", "DELETE": "worktree.remove"}
    mounts = {"original": "experimental/worktree"}
    answers = (409,)

    @takes(directory=True)
    def get(self, request):
        return Response(worktrees.worktree_list(context=self.context(request)))

    @takes(WorktreeCreateBody, directory=True)
    def post(self, request):
        body = self.body(request)
        workspace = worktrees.worktree_create(context=self.context(request), name=body.get("name"),
                                              start_command=body.get("startCommand"))
        return Response(worktrees.worktree_wire(workspace))

    @takes(WorktreeDirectoryBody, directory=True)
    def delete(self, request):
        body = self.body(request)
        return Response(worktrees.worktree_remove(context=self.context(request), directory=body["directory"]))


class WorktreeResetView(ApiView):
    operation_ids = {"POST": "worktree.reset"}
    mounts = {"original": "experimental/worktree/reset"}
    answers = (409,)

    @takes(WorktreeDirectoryBody, directory=True)
    def post(self, request):
        body = self.body(request)
        return Response(worktrees.worktree_reset(context=self.context(request), directory=body["directory"]))
