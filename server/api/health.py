"""global.health: the one route that answers anonymously (besides the public share pages)."""
from django.conf import settings
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from agentserver import sandbox


class HealthView(APIView):
    operation_ids = {"GET": "global.health"}
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        return Response({"healthy": True, "version": settings.VERSION, "sandbox": sandbox.describe()})
