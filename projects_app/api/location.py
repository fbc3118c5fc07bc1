"""path.get and vcs.get: where the client works."""
from rest_framework.response import Response

from agentserver.api import ApiView, V2RequestView
from projects_app.environment import path_info, vcs_info


class PathView(ApiView):
    operation_ids = {"GET": "path.get"}

    def get(self, request):
        return Response(path_info(context=self.context(request)))


class VcsView(ApiView):
    operation_ids = {"GET": "vcs.get"}

    def get(self, request):
        return Response(vcs_info(context=self.context(request)))


class V2VcsView(V2RequestView):
    operation_ids = {"GET": "vcs.get"}

    def get(self, request):
        return Response(vcs_info(context=self.context(request)))
