"""experimental.console.get / .listOrgs / .switchOrg: the opencode Console's state (org-managed providers), which
this server has none of: no orgs to list, none to switch to."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import ApiView, StrictCharField, takes
from providers_app.selectors import console_org_switch, console_orgs, console_state


class SwitchOrgBody(serializers.Serializer):
    accountID = StrictCharField(max_length=255)
    orgID = StrictCharField(max_length=255)


class ConsoleView(ApiView):
    operation_ids = {"GET": "experimental.console.get"}
    mounts = {"original": "experimental/console"}

    def get(self, request):
        return Response(console_state())


class ConsoleOrgsView(ApiView):
    operation_ids = {"GET": "experimental.console.listOrgs"}
    mounts = {"original": "experimental/console/orgs"}

    @takes(directory=True)
    def get(self, request):
        self.context(request)
        return Response({"orgs": console_orgs()})


class ConsoleSwitchView(ApiView):
    operation_ids = {"POST": "experimental.console.switchOrg"}
    mounts = {"original": "experimental/console/switch"}

    @takes(SwitchOrgBody, directory=True)
    def post(self, request):
        body = self.body(request)
        self.context(request)
        return Response(console_org_switch(account_id=body["accountID"], org_id=body["orgID"]))
