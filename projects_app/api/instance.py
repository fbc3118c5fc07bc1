"""instance.dispose (one directory) and global.dispose (all of the caller's): projects_app.instance."""
from rest_framework.response import Response

from agentserver.http.api import ApiView, takes
from projects_app.instance import global_dispose, instance_dispose


class InstanceDisposeView(ApiView):
    operation_ids = {"POST": "instance.dispose"}
    mounts = {"original": "instance/dispose"}

    @takes(directory=True)
    def post(self, request):
        return Response(instance_dispose(context=self.context(request)))


class GlobalDisposeView(ApiView):
    operation_ids = {"POST": "global.dispose"}
    mounts = {"original": "global/dispose"}

    def post(self, request):
        return Response(global_dispose(user=request.user))
