"""Integrations (v2): integration.list / .get, connecting one with a key (integration.connect.key) or through
an OAuth attempt (integration.connect.oauth, integration.attempt.status / .cancel / .complete), and the stored
credentials (credential.update, credential.remove). Over providers_app.integrations."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import LocatedView, StrictCharField, succeeds_with, takes
from providers_app import integrations


class KeyBody(serializers.Serializer):
    key = StrictCharField(max_length=10_000)
    label = StrictCharField(max_length=1000, required=False, allow_blank=True)


class OAuthBody(serializers.Serializer):
    methodID = StrictCharField(max_length=64)
    inputs = serializers.DictField(required=False)
    label = StrictCharField(max_length=1000, required=False, allow_blank=True)


class CompleteBody(serializers.Serializer):
    code = StrictCharField(max_length=10_000, required=False, allow_blank=True, trim_whitespace=False)


class LabelBody(serializers.Serializer):
    label = StrictCharField(max_length=1000, allow_blank=True)


class IntegrationView(LocatedView):
    operation_ids = {"GET": "integration.list"}
    mounts = {"v2": "integration"}

    @takes(directory=True)
    def get(self, request):
        return self.located(request, integrations.integration_list(context=self.context(request)))


class IntegrationItemView(LocatedView):
    operation_ids = {"GET": "integration.get"}
    mounts = {"v2": "integration/<str:integrationID>"}

    @takes(directory=True)
    def get(self, request, integrationID: str):
        context = self.context(request)
        return self.located(request, integrations.integration_get(context=context, integration_id=integrationID))


class ConnectKeyView(LocatedView):
    operation_ids = {"POST": "integration.connect.key"}
    mounts = {"v2": "integration/<str:integrationID>/connect/key"}

    @takes(KeyBody, directory=True)
    @succeeds_with(204)
    def post(self, request, integrationID: str):
        body = self.body(request)
        integrations.connect_key(context=self.context(request), integration_id=integrationID, key=body["key"],
                                 label=body.get("label"))
        return Response(status=204)


class ConnectOAuthView(LocatedView):
    operation_ids = {"POST": "integration.connect.oauth"}
    mounts = {"v2": "integration/<str:integrationID>/connect/oauth"}

    @takes(OAuthBody, directory=True)
    def post(self, request, integrationID: str):
        body = self.body(request)
        return self.located(request, integrations.connect_oauth(context=self.context(request),
                                                                integration_id=integrationID,
                                                                method_id=body["methodID"]))


class AttemptView(LocatedView):
    operation_ids = {"GET": "integration.attempt.status", "DELETE": "integration.attempt.cancel"}
    mounts = {"v2": "integration/attempt/<str:attemptID>"}

    @takes(directory=True)
    def get(self, request, attemptID: str):
        return self.located(request, integrations.attempt_status(user=request.user, attempt_id=attemptID))

    @succeeds_with(204)
    def delete(self, request, attemptID: str):
        integrations.attempt_cancel(user=request.user, attempt_id=attemptID)
        return Response(status=204)


class AttemptCompleteView(LocatedView):
    operation_ids = {"POST": "integration.attempt.complete"}
    mounts = {"v2": "integration/attempt/<str:attemptID>/complete"}

    @takes(CompleteBody)
    @succeeds_with(204)
    def post(self, request, attemptID: str):
        body = self.body(request)
        integrations.attempt_complete(user=request.user, attempt_id=attemptID, code=body.get("code"))
        return Response(status=204)


class CredentialView(LocatedView):
    operation_ids = {"PATCH": "credential.update", "DELETE": "credential.remove"}
    mounts = {"v2": "credential/<str:credentialID>"}

    @takes(LabelBody)
    @succeeds_with(204)
    def patch(self, request, credentialID: str):
        body = self.body(request)
        integrations.credential_update(user=request.user, credential_id=credentialID, label=body["label"])
        return Response(status=204)

    @succeeds_with(204)
    def delete(self, request, credentialID: str):
        integrations.credential_remove(user=request.user, credential_id=credentialID)
        return Response(status=204)
