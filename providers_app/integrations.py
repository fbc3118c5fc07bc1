"""Integrations (v2): for each provider, how it can be connected (OAuth sign-in, an API key, environment
variables) and what connects it now (the caller's auth accounts, the server's environment); connecting one
with a key or through an OAuth attempt, and the stored credentials' label and removal."""
from __future__ import annotations

import os

from django.db import transaction

from agentserver.clock import now_ms
from agentserver.context import RuntimeContext
from agentserver.errors import BadRequest, NotFound
from auth_app.accounts import account_list
from providers_app import models_catalog, oauth, store
from providers_app.models import OAuthPending


def integration_list(*, context: RuntimeContext) -> list[dict]:
    accounts: dict[str, list[dict]] = {}
    for account in account_list(user=context.user):
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


def integration_get(*, context: RuntimeContext, integration_id: str) -> dict:
    """One provider's integration (v2 integration.get): 404 for a provider this context does not know."""
    for integration in integration_list(context=context):
        if integration["id"] == integration_id:
            return integration
    raise NotFound(f"Integration not found: {integration_id}", integrationID=integration_id)


def connect_key(*, context: RuntimeContext, integration_id: str, key: str, label: str | None = None) -> None:
    """v2 integration.connect.key: the key becomes the caller's active credential for the provider."""
    from auth_app import accounts

    integration_get(context=context, integration_id=integration_id)
    with transaction.atomic():
        accounts.account_create(user=context.user, service_id=integration_id, credential={"type": "api", "key": key},
                                description=label or "", active=True)


def _attempt_times(pending: OAuthPending) -> dict:
    return {"created": pending.time_created, "expires": pending.time_created + oauth.PENDING_TTL_MS}


def connect_oauth(*, context: RuntimeContext, integration_id: str, method_id: str) -> dict:
    """v2 integration.connect.oauth: start the provider's OAuth method `method_id` (its index in
    integration.get's methods). The attempt is the pending sign-in; its id is the flow's unguessable state.
    Our server is not on the user's machine, so every attempt is completed with a pasted code (mode "code")."""
    integration = integration_get(context=context, integration_id=integration_id)
    known = {m.get("id") for m in integration["methods"] if m.get("type") == "oauth"}
    if method_id not in known:
        raise BadRequest(f"Integration {integration_id} has no OAuth method {method_id!r}", kind="Body",
                         issues=[{"path": ["methodID"], "message": f"one of {sorted(known)}"}])
    started = oauth.oauth_authorize(user=context.user, provider_id=integration_id, method=int(method_id))
    pending = store.sign_in_get(user=context.user, provider_id=integration_id)
    return {"attemptID": pending.state, "url": started["url"], "instructions": started["instructions"],
            "mode": "code", "time": _attempt_times(pending)}


def _attempt(user, attempt_id: str) -> OAuthPending:
    pending = store.sign_in_by_state(user=user, state=attempt_id)
    if pending is None:
        raise NotFound(f"Integration attempt not found: {attempt_id}", attemptID=attempt_id)
    return pending


def attempt_status(*, user, attempt_id: str) -> dict:
    """A pending attempt, or an expired one (completed and cancelled attempts are gone: 404)."""
    pending = _attempt(user, attempt_id)
    expired = now_ms() - pending.time_created > oauth.PENDING_TTL_MS
    return {"status": "expired" if expired else "pending", "time": _attempt_times(pending)}


def attempt_cancel(*, user, attempt_id: str) -> None:
    store.sign_in_ended(_attempt(user, attempt_id))


def attempt_complete(*, user, attempt_id: str, code: str | None) -> None:
    """Exchange the pasted code; the credential becomes the caller's active one for the provider."""
    pending = _attempt(user, attempt_id)
    oauth.oauth_callback(user=user, provider_id=pending.provider_id, method=pending.method, code=code)


def credential_update(*, user, credential_id: str, label: str) -> None:
    """v2 credential.update: a stored credential's label (the auth account's description)."""
    from auth_app import accounts

    accounts.account_update(user=user, account_id=credential_id, description=label)


def credential_remove(*, user, credential_id: str) -> None:
    from auth_app import accounts

    accounts.account_delete(user=user, account_id=credential_id)
