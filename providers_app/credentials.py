"""Where a provider's credential comes from, in order: the user's active auth account for the provider,
the provider's env vars (the server's environment), `options.apiKey` in the effective config.

A credential is `{"type": "api", "key": ...}` or `{"type": "oauth", "access": ...}`. It only ever travels to
the provider's SDK client; nothing here is rendered into a response."""
from __future__ import annotations

import logging
import os

from auth_app.accounts import active_credential

log = logging.getLogger(__name__)


def account_credential(user, service_id: str) -> dict | None:
    try:
        credential = active_credential(user, service_id)
    except Exception:  # a broken account row must not take the provider list down
        log.exception("reading the auth account of %s failed", service_id)
        return None
    return credential if isinstance(credential, dict) and credential.get("type") in ("api", "oauth") else None


def env_credential(env_names: list[str]) -> dict | None:
    for name in env_names:
        value = os.environ.get(name)
        if value:
            return {"type": "api", "key": value}
    return None


def config_credential(options: dict) -> dict | None:
    key = options.get("apiKey") if isinstance(options, dict) else None
    return {"type": "api", "key": key} if isinstance(key, str) and key else None


def credential_for(user, provider: dict, options: dict) -> dict | None:
    """The usable credential of `provider` for `user`, or None."""
    return credential_and_source(user, provider, options)[0]


def credential_and_source(user, provider: dict, options: dict) -> tuple[dict | None, str]:
    """The usable credential and where it came from, which says who pays for the call: "account" (the
    person's own key, stored with their auth accounts), "server" (a key in the server's environment, which
    the admin shares with everyone), "config" (`options.apiKey` of the effective config), or "none"."""
    for source, credential in (("account", lambda: account_credential(user, provider["id"])),
                               ("server", lambda: env_credential(provider.get("env") or [])),
                               ("config", lambda: config_credential(options))):
        found = credential()
        if found:
            return found, source
    return None, "none"


def secret_of(credential: dict) -> str:
    return credential.get("key") if credential.get("type") == "api" else credential.get("access") or ""
