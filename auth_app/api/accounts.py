"""v2 auth.* routes (server kind: no runtime context). Credentials go in, only masks come out."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import (
    BOOLEAN,
    NUMBER,
    STRING,
    TIMES,
    TRUE,
    ApiView,
    NonBlankCharField,
    StrictBooleanField,
    StrictCharField,
    array,
    id_param,
    record,
    takes,
)
from auth_app import accounts


class CredentialField(serializers.JSONField):
    """A credential; accounts.normalize_credential checks it, and states its schema beside it."""
    openapi_schema = accounts.CREDENTIAL_SCHEMA


class CredentialBody(serializers.Serializer):
    """A body that is a credential (PUT /auth/{providerID})."""

    def to_internal_value(self, data):
        try:
            return accounts.normalize_credential(data, at=())
        except BadRequest as error:  # as a validation error, so it reads like every other 400 of the edge
            raise serializers.ValidationError(
                {".".join(map(str, issue["path"])) or "credential": [issue["message"]]
                 for issue in error.data["issues"]} or [error.message]) from None

    @classmethod
    def openapi_schema(cls, auto_schema, direction) -> dict:
        return accounts.CREDENTIAL_SCHEMA


class AccountCreateInput(serializers.Serializer):
    serviceID = NonBlankCharField(max_length=255)
    credential = CredentialField()
    description = StrictCharField(max_length=1000, required=False, allow_blank=True)
    active = StrictBooleanField(required=False)


class AccountUpdateInput(serializers.Serializer):
    description = StrictCharField(max_length=1000, required=False, allow_blank=True)
    credential = CredentialField(required=False)


class AccountListQuery(serializers.Serializer):
    serviceID = StrictCharField(max_length=255, required=False)


# accounts.account_wire: the secret never, its mask and fingerprint (and an OAuth token's expiry, an API key's
# metadata) instead.
ACCOUNT = record(
    {"id": STRING, "serviceID": STRING, "description": STRING, "active": BOOLEAN, "time": TIMES,
     "credential": record({"type": {"enum": ["api", "oauth", "wellknown"]}, "masked": STRING, "fingerprint": STRING},
                          {"expires": NUMBER, "metadata": {"type": "object", "additionalProperties": STRING},
                           "undecryptable": TRUE})})


class AuthListView(ApiView):
    operation_ids = {"GET": "auth.list", "POST": "auth.create"}
    mounts = {"v2": "auth"}
    answer_schemas = {"GET": record({"accounts": array(ACCOUNT),
                                     "active": {"type": "object", "additionalProperties": STRING}}),
                      "POST": ACCOUNT}

    @takes(query=AccountListQuery)
    def get(self, request):
        query = self.query(request)
        items = accounts.account_list(user=request.user, service_id=query.get("serviceID"))
        return Response({
            "accounts": [accounts.account_wire(account) for account in items],
            "active": accounts.active_accounts(user=request.user),
        })

    @takes(AccountCreateInput)
    def post(self, request):
        data = self.body(request)
        account = accounts.account_create(
            user=request.user, service_id=data["serviceID"], credential=data["credential"],
            description=data.get("description", ""), active=data.get("active"),
        )
        return Response(accounts.account_wire(account))


class AuthItemView(ApiView):
    operation_ids = {"GET": "auth.get", "PATCH": "auth.update", "DELETE": "auth.delete"}
    mounts = {"v2": "auth/<str:accountID>"}
    answer_schemas = {"GET": ACCOUNT, "PATCH": ACCOUNT, "DELETE": TRUE}

    def get(self, request, accountID: str):
        account = accounts.account_get(user=request.user, account_id=id_param(accountID, "acc", "account"))
        return Response(accounts.account_wire(account))

    @takes(AccountUpdateInput)
    def patch(self, request, accountID: str):
        account_id = id_param(accountID, "acc", "account")
        data = self.body(request)
        account = accounts.account_update(user=request.user, account_id=account_id,
                                          description=data.get("description"), credential=data.get("credential"))
        return Response(accounts.account_wire(account))

    def delete(self, request, accountID: str):
        accounts.account_delete(user=request.user, account_id=id_param(accountID, "acc", "account"))
        return Response(True)


class AuthActivateView(ApiView):
    operation_ids = {"POST": "auth.activate"}
    mounts = {"v2": "auth/<str:accountID>/activate"}
    answer_schemas = {"POST": ACCOUNT}

    def post(self, request, accountID: str):
        account = accounts.account_activate(user=request.user, account_id=id_param(accountID, "acc", "account"))
        return Response(accounts.account_wire(account))


# ---- opencode's PUT/DELETE /auth/{providerID} (original mount): the TUI's "connect a provider" -------------

class ProviderAuthView(ApiView):
    operation_ids = {"PUT": "auth.set", "DELETE": "auth.remove"}
    mounts = {"original": "auth/<str:providerID>"}
    path_patterns = {"providerID": accounts.PROVIDER_ID_PATTERN}  # noqa: RUF012

    @takes(CredentialBody)
    def put(self, request, providerID: str):
        credential = self.body(request)
        accounts.provider_auth_set(user=request.user, provider_id=providerID, credential=credential)
        return Response(True)

    def delete(self, request, providerID: str):
        return Response(accounts.provider_auth_remove(user=request.user, provider_id=providerID))
