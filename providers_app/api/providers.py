"""Providers and their models: provider.list, provider.auth, provider.oauth.*, config.providers (original);
provider.list, model.list, catalog.model.list / catalog.model.get (v2)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import (
    PATH_MAX_LENGTHS,
    STRING,
    ApiView,
    StrictCharField,
    StrictIntegerField,
    V2RequestView,
    array,
    record,
    takes,
)
from providers_app import oauth, selectors

MAX_ID = PATH_MAX_LENGTHS["providerID"]


def provider_id_param(value: str) -> str:
    if not value or len(value) > MAX_ID:
        raise BadRequest(f"Invalid provider id: {value!r}", kind="Params")
    return value


_NUMBER = {"type": "number"}
_MODALITY = {"type": "array", "items": {"enum": ["text", "audio", "image", "video", "pdf"]}}
# The customer's spec (api.md, "Provider" and "Model") keeps the models.dev shape here; opencode 1.18 answers
# its internal shape, which GET /config/providers gives.
MODELS_DEV_MODEL = {
    "type": "object", "required": ["id", "name", "release_date", "attachment", "reasoning", "temperature",
                                   "tool_call", "limit", "options"],
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "release_date": {"type": "string"},
        "attachment": {"type": "boolean"}, "reasoning": {"type": "boolean"}, "temperature": {"type": "boolean"},
        "tool_call": {"type": "boolean"},
        "limit": {"type": "object", "required": ["context", "output"],
                  "properties": {"context": _NUMBER, "output": _NUMBER}},
        "options": {"type": "object"},
        "interleaved": {"anyOf": [{"enum": [True]}, {
            "type": "object", "required": ["field"],
            "properties": {"field": {"enum": ["reasoning_content", "reasoning_details"]}}}]},
        "cost": {"type": "object", "required": ["input", "output"], "properties": {
            "input": _NUMBER, "output": _NUMBER, "cache_read": _NUMBER, "cache_write": _NUMBER,
            "context_over_200k": {"type": "object", "required": ["input", "output"], "properties": {
                "input": _NUMBER, "output": _NUMBER, "cache_read": _NUMBER, "cache_write": _NUMBER}}}},
        "modalities": {"type": "object", "required": ["input", "output"],
                       "properties": {"input": _MODALITY, "output": _MODALITY}},
        "experimental": {"type": ["boolean", "object"]},  # models.dev now says {modes: …} for some models
        "status": {"enum": ["alpha", "beta", "deprecated"]},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "provider": {"type": "object", "required": ["npm"], "properties": {"npm": {"type": "string"}}},
    },
}
MODELS_DEV_PROVIDER_LIST = {
    "type": "object", "required": ["all", "default", "connected"],
    "properties": {
        "all": {"type": "array", "items": {
            "type": "object", "required": ["id", "name", "env", "models"],
            "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                           "env": {"type": "array", "items": {"type": "string"}},
                           "models": {"type": "object", "additionalProperties": MODELS_DEV_MODEL},
                           "api": {"type": "string"}, "npm": {"type": "string"}}}},
        "default": {"type": "object", "additionalProperties": {"type": "string"}},
        "connected": {"type": "array", "items": {"type": "string"}},
    },
}


class ProviderListView(ApiView):
    operation_ids = {"GET": "provider.list"}
    mounts = {"original": "provider"}
    answer_schemas = {"GET": MODELS_DEV_PROVIDER_LIST}

    @takes(directory=True)
    def get(self, request):
        return Response(selectors.provider_list(context=self.context(request)))


class ConfigProvidersView(ApiView):
    operation_ids = {"GET": "config.providers"}
    mounts = {"original": "config/providers"}

    @takes(directory=True)
    def get(self, request):
        return Response(selectors.config_providers(context=self.context(request)))


class ProviderAuthView(ApiView):
    operation_ids = {"GET": "provider.auth"}
    mounts = {"original": "provider/auth"}

    def get(self, request):
        return Response(oauth.auth_methods())


class AuthorizeInput(serializers.Serializer):
    method = StrictIntegerField(min_value=0)
    inputs = serializers.DictField(child=StrictCharField(allow_blank=True), required=False)


class CallbackInput(serializers.Serializer):
    method = StrictIntegerField(min_value=0)
    code = StrictCharField(required=False, allow_blank=True, max_length=8192)


class OAuthAuthorizeView(ApiView):
    operation_ids = {"POST": "provider.oauth.authorize"}
    mounts = {"original": "provider/<str:providerID>/oauth/authorize"}

    @takes(AuthorizeInput)
    def post(self, request, providerID: str):
        data = self.body(request)
        return Response(oauth.oauth_authorize(user=request.user, provider_id=provider_id_param(providerID),
                                              method=data["method"]))


class OAuthCallbackView(ApiView):
    operation_ids = {"POST": "provider.oauth.callback"}
    mounts = {"original": "provider/<str:providerID>/oauth/callback"}

    @takes(CallbackInput)
    def post(self, request, providerID: str):
        data = self.body(request)
        return Response(oauth.oauth_callback(user=request.user, provider_id=provider_id_param(providerID),
                                             method=data["method"], code=data.get("code")))


class V2ProviderListView(V2RequestView):
    operation_ids = {"GET": "provider.list"}
    mounts = {"v2": "provider"}

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        return Response({"location": context.location(),
                         "data": selectors.provider_list_v2(context=context)})


class V2ProviderView(V2RequestView):
    operation_ids = {"GET": "provider.get"}
    mounts = {"v2": "provider/<str:providerID>"}

    @takes(directory=True)
    def get(self, request, providerID: str):
        context = self.context(request)
        return Response({"location": context.location(),
                         "data": selectors.provider_get_v2(context=context, provider_id=providerID)})


class V2ModelListView(V2RequestView):
    operation_ids = {"GET": "model.list"}
    mounts = {"v2": "model"}

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        return Response({"location": context.location(), "data": selectors.model_list_v2(context=context)})


CATALOG_MODEL = {"allOf": [MODELS_DEV_MODEL, record({"providerID": STRING}, closed=False)]}


class CatalogModelListView(ApiView):
    operation_ids = {"GET": "catalog.model.list"}
    mounts = {"v2": "catalog/model"}
    answer_schemas = {"GET": array(CATALOG_MODEL)}

    def get(self, request):
        return Response(selectors.catalog_model_list())


class CatalogModelView(ApiView):
    operation_ids = {"GET": "catalog.model.get"}
    mounts = {"v2": "catalog/model/<str:providerID>/<path:modelID>"}
    answer_schemas = {"GET": CATALOG_MODEL}

    def get(self, request, providerID: str, modelID: str):
        return Response(selectors.catalog_model_get(provider_id=provider_id_param(providerID), model_id=modelID))
