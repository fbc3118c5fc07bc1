"""integration.list: for each provider, how it can be connected (OAuth sign-in, an API key, environment
variables) and what connects it now (the caller's auth accounts, the server's environment)."""
from __future__ import annotations

import os

from agentserver.context import RuntimeContext
from auth_app.models import AuthAccount
from providers_app import models_catalog, oauth


def integration_list(*, context: RuntimeContext) -> list[dict]:
    accounts: dict[str, list[dict]] = {}
    for account in AuthAccount.objects.filter(owner=context.user).order_by("service_id", "id"):
        accounts.setdefault(account.service_id, []).append(
            {"type": "credential", "id": account.id, "label": account.description or account.masked})
    out = []
    for provider_id, entry in models_catalog.provider_entries(context).items():
        methods = []
        for index, method in enumerate(oauth.METHODS.get(provider_id, [])):
            if isinstance(method, oauth.OAuthMethod):
                methods.append({"id": str(index), "type": "oauth", "label": method.label})
        methods.append({"type": "key"})
        env_names = [n for n in (entry.record.get("env") or []) if isinstance(n, str)]
        if env_names:
            methods.append({"type": "env", "names": env_names})
        connections = list(accounts.get(provider_id, []))
        connections += [{"type": "env", "name": name} for name in env_names if os.environ.get(name)]
        out.append({"id": provider_id, "name": entry.record.get("name") or provider_id, "methods": methods,
                    "connections": connections})
    return out
