"""global.upgrade: opencode upgrades its own binary on the user's machine. This server is shared by its users
and upgraded by its administrator (a new checkout, `make serve`), never by an API call: it answers, in the
route's own shape, that it did not upgrade and why."""
from django.conf import settings
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import ApiView, StrictCharField, takes


class UpgradeBody(serializers.Serializer):
    target = StrictCharField(max_length=128)


class UpgradeView(ApiView):
    operation_ids = {"POST": "global.upgrade"}
    mounts = {"original": "global/upgrade"}

    @takes(UpgradeBody)
    def post(self, request):
        self.body(request)
        return Response({"success": False,
                         "error": f"This server (version {settings.VERSION}) is upgraded by its administrator, "
                                  "not through the API"})
