"""Reads behind the provider routes, always for the caller's runtime context (their config, their accounts)."""
from __future__ import annotations

from agentserver.errors import NotFound
from providers_app import catalog, models_catalog, shapes


def provider_list(*, context) -> dict:
    """`GET /provider`: every provider (models.dev shape), best model per provider, the connected ids."""
    entries = models_catalog.provider_entries(context)
    return {
        "all": [shapes.provider_seed(entry) for entry in entries.values()],
        "default": models_catalog.default_map(entries),
        "connected": [provider_id for provider_id, entry in entries.items() if entry.connected],
    }


def _connected(context) -> dict[str, models_catalog.ProviderEntry]:
    return {k: v for k, v in models_catalog.provider_entries(context).items() if v.connected}


def config_providers(*, context) -> dict:
    """`GET /config/providers`: connected providers only, in the internal shape (as 1.18 does)."""
    entries = _connected(context)
    return {"providers": [shapes.provider_internal(entry) for entry in entries.values()],
            "default": models_catalog.default_map(entries)}


def provider_list_v2(*, context) -> list[dict]:
    return [shapes.provider_v2(entry) for entry in _connected(context).values()]


def provider_get_v2(*, context, provider_id: str) -> dict:
    """v2 provider.get: one provider this context has connected (404 for any other)."""
    entry = _connected(context).get(provider_id)
    if entry is None:
        raise NotFound(f"Provider not found: {provider_id}", providerID=provider_id)
    return shapes.provider_v2(entry)


def model_list_v2(*, context) -> list[dict]:
    return [shapes.model_v2(entry, model) for entry in _connected(context).values()
            for model in entry.record.get("models", {}).values()]


def console_state() -> dict:
    """experimental.console.get: no opencode Console (org-managed providers) integration exists on this server."""
    return {"consoleManagedProviders": [], "switchableOrgCount": 0}


def console_orgs() -> list[dict]:
    """experimental.console.listOrgs: this server signs in to no opencode Console account, so it has no orgs."""
    return []


def console_org_switch(*, account_id: str, org_id: str) -> bool:
    raise NotFound(f"No Console org {org_id} of account {account_id}: this server signs in to no opencode Console "
                   "account", accountID=account_id, orgID=org_id)


def catalog_model_list() -> list[dict]:
    return [shapes.catalog_model(provider_id, model) for provider_id, provider in catalog.catalog().items()
            for model in provider["models"].values()]


def catalog_model_get(*, provider_id: str, model_id: str) -> dict:
    provider = catalog.catalog().get(provider_id)
    model = provider["models"].get(model_id) if provider else None
    if model is None:
        raise NotFound(f"Model not found: {provider_id}/{model_id}")
    return shapes.catalog_model(provider_id, model)
