"""Where the client works: path.get (original) and location.get (v2)."""
from rest_framework.response import Response

from agentserver.http.api import ApiView, LocatedView, takes
from projects_app.environment import path_info


class PathView(ApiView):
    operation_ids = {"GET": "path.get"}
    mounts = {"original": "path"}

    @takes(directory=True)
    def get(self, request):
        return Response(path_info(context=self.context(request)))


class LocationView(LocatedView):
    operation_ids = {"GET": "location.get"}
    mounts = {"v2": "location"}

    @takes(directory=True)
    def get(self, request):
        return Response(self.context(request).location())
