"""experimental.console.get: the opencode Console's state (org-managed providers), which this server has none of."""
from rest_framework.response import Response

from agentserver.api import ApiView
from providers_app.selectors import console_state


class ConsoleView(ApiView):
    operation_ids = {"GET": "experimental.console.get"}

    def get(self, request):
        return Response(console_state())
