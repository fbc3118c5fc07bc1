"""integration.list (v2): how each provider can be connected and what connects it (providers_app.integrations)."""
from agentserver.api import LocatedView
from providers_app.integrations import integration_list


class IntegrationView(LocatedView):
    operation_ids = {"GET": "integration.list"}

    def get(self, request):
        return self.located(request, integration_list(context=self.context(request)))
