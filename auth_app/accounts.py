"""Auth accounts (v2 auth.*): saved credentials per service, encrypted at rest, write-only on the wire.

One account per (user, service) may be active; the providers layer reads it with `active_credential()`.
Services take keyword-only arguments and run in a transaction; selectors are scoped to `user=`."""
import hashlib
import logging
import re

from django.db import transaction
from django.db.models import QuerySet

from agentserver import ids
from agentserver.clock import now_ms
from agentserver.errors import BadRequest, NotFound
from agentserver.events import publisher as events
from auth_app import crypto, store
from auth_app.models import AuthAccount

log = logging.getLogger(__name__)

CREDENTIAL_TYPES = ("api", "oauth")


# ---- masking -------------------------------------------------------------------------------------------

def _secret_material(credential: dict) -> str:
    if credential.get("type") == "oauth":
        return credential.get("access", "") + "\x00" + credential.get("refresh", "")
    return credential.get("key", "")


def mask_secret(secret: str) -> str:
    """`sk-…abcd` for keys long enough that showing 7 characters leaves the rest unguessable; else `…`."""
    if len(secret) >= 16:
        return f"{secret[:3]}…{secret[-4:]}"
    return "…"


def fingerprint_of(credential: dict) -> str:
    return "sha256:" + hashlib.sha256(_secret_material(credential).encode()).hexdigest()[:12]


def _mask_credential(credential: dict) -> str:
    if credential.get("type") == "oauth":
        return mask_secret(credential.get("access", ""))
    return mask_secret(credential.get("key", ""))


# ---- validation ----------------------------------------------------------------------------------------

_SECRET = {"type": "string", "minLength": 1}
# What normalize_credential takes, stated for /doc beside it.
CREDENTIAL_SCHEMA = {"oneOf": [
    {"type": "object", "required": ["type", "key"],
     "properties": {"type": {"const": "api"}, "key": _SECRET,
                    "metadata": {"type": ["object", "null"], "additionalProperties": {"type": "string"}}}},
    {"type": "object", "required": ["type", "refresh", "access", "expires"],
     "properties": {"type": {"const": "oauth"}, "refresh": _SECRET, "access": _SECRET,
                    "expires": {"type": "number", "minimum": 0}}},
]}


def normalize_credential(value, *, at: tuple[str, ...] = ("credential",)) -> dict:
    """Check a credential against the spec's two shapes and return a clean copy (no unknown fields). `at` is
    where the credential sits in the body (nothing when the body is the credential), for the errors' paths."""
    def where(*names: str) -> list[str]:
        return [*at, *names]

    def called(name: str) -> str:
        return ".".join(where(name))

    if not isinstance(value, dict):
        raise BadRequest(f"{'.'.join(at) or 'the body'} must be an object",
                         issues=[{"path": list(at), "message": "not an object"}])
    kind = value.get("type")
    if kind == "api":
        key = value.get("key")
        if not isinstance(key, str) or not key:
            raise BadRequest(f"{called('key')} must be a non-empty string",
                             issues=[{"path": where("key"), "message": "required string"}])
        clean = {"type": "api", "key": key}
        metadata = value.get("metadata")
        if metadata is not None:
            if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
            ):
                raise BadRequest(f"{called('metadata')} must map strings to strings",
                                 issues=[{"path": where("metadata"), "message": "map of strings"}])
            clean["metadata"] = dict(metadata)
        return clean
    if kind == "oauth":
        issues = [
            {"path": where(name), "message": "required string"}
            for name in ("refresh", "access") if not isinstance(value.get(name), str) or not value.get(name)
        ]
        expires = value.get("expires")
        if isinstance(expires, bool) or not isinstance(expires, (int, float)) or expires < 0:
            issues.append({"path": where("expires"), "message": "required non-negative number"})
        if issues:
            raise BadRequest("Invalid oauth credential", issues=issues)
        clean = {"type": "oauth", "refresh": value["refresh"], "access": value["access"], "expires": int(expires)}
        for optional in ("accountId", "enterpriseUrl"):
            if isinstance(value.get(optional), str):
                clean[optional] = value[optional]
        return clean
    raise BadRequest(f"{called('type')} must be 'api' or 'oauth'",
                     issues=[{"path": where("type"), "message": "expected 'api' or 'oauth'"}])


def _store_credential(account: AuthAccount, credential: dict) -> None:
    account.credential_type = credential["type"]
    account.ciphertext = crypto.encrypt_json(credential)
    account.masked = _mask_credential(credential)
    account.fingerprint = fingerprint_of(credential)


# ---- wire ----------------------------------------------------------------------------------------------

def account_wire(account: AuthAccount) -> dict:
    """What clients see: never the secret, only its mask and fingerprint (plus non-secret fields)."""
    credential: dict = {"type": account.credential_type, "masked": account.masked,
                        "fingerprint": account.fingerprint}
    if account.credential_type == "oauth" or account.credential_type == "api":
        try:
            plain = crypto.decrypt_json(account.ciphertext)
        except crypto.CredentialDecryptError:
            plain = {}
            credential["undecryptable"] = True
        if account.credential_type == "oauth" and "expires" in plain:
            credential["expires"] = plain["expires"]
        if account.credential_type == "api" and plain.get("metadata"):
            credential["metadata"] = plain["metadata"]
    return {
        "id": account.id,
        "serviceID": account.service_id,
        "description": account.description,
        "active": account.active,
        "credential": credential,
        "time": {"created": account.time_created, "updated": account.time_updated},
    }


# ---- selectors -----------------------------------------------------------------------------------------

def account_list(*, user, service_id: str | None = None) -> QuerySet:
    return store.accounts_of(user=user, service_id=service_id)


def active_accounts(*, user) -> dict[str, str]:
    """{serviceID: accountID} of the caller's active accounts."""
    return store.active_account_ids(user)


def services_with_active_account(*, user) -> set[str]:
    """The services the user has an active account for (credentials are decrypted only when used)."""
    return store.services_with_active_account(user)


def has_active_account(*, user, service_id: str) -> bool:
    return store.has_active_account(user, service_id)


def account_get(*, user, account_id: str) -> AuthAccount:
    account = store.account_of(user=user, account_id=account_id)
    if account is None:
        raise NotFound(f"Account not found: {account_id}")
    return account


def active_credential(user, service_id: str) -> dict | None:
    """The decrypted credential dict of the user's active account for `service_id`, or None.
    (The providers layer calls exactly this.) An undecryptable credential is treated as absent and logged
    without any secret."""
    account = store.active_account(user.pk, service_id)
    if account is None:
        return None
    try:
        return crypto.decrypt_json(account.ciphertext)
    except crypto.CredentialDecryptError:
        log.warning("auth account %s (%s) cannot be decrypted with the configured keys", account.id, service_id)
        return None


# ---- services ------------------------------------------------------------------------------------------

def _publish(user, type_: str, account: AuthAccount) -> None:
    events.publish(type_, {"accountID": account.id, "serviceID": account.service_id}, owner_id=user.pk)


def _make_active(account: AuthAccount) -> None:
    # Deactivate the others first so the partial unique constraint never sees two active rows.
    store.others_deactivated(account)
    account.active = True


@transaction.atomic
def account_create(*, user, service_id: str, credential: dict, description: str = "",
                   active: bool | None = None) -> AuthAccount:
    """Save a new account. It becomes active when asked, or when the service had no active account yet."""
    if not isinstance(service_id, str) or not service_id.strip():
        raise BadRequest("serviceID must be a non-empty string", issues=[{"path": ["serviceID"], "message": "required"}])
    clean = normalize_credential(credential)
    account = AuthAccount(id=ids.ascending("acc"), owner=user, service_id=service_id, description=description or "")
    _store_credential(account, clean)
    has_active = store.has_active_locked(user=user, service_id=service_id)
    if active or (active is None and not has_active):
        _make_active(account)
    store.account_saved(account)
    _publish(user, "auth.updated", account)
    return account


def accounts_forget(*, user, service_id: str) -> None:
    """Every account of the user for the service goes, unannounced (an MCP server's sign-in replaced or
    removed: the server's status says so)."""
    store.accounts_deleted(user=user, service_id=service_id)


@transaction.atomic
def account_update(*, user, account_id: str, description: str | None = None,
                   credential: dict | None = None) -> AuthAccount:
    account = account_get(user=user, account_id=account_id)
    if description is not None:
        account.description = description
    if credential is not None:
        _store_credential(account, normalize_credential(credential))
    account.time_updated = now_ms()
    store.account_saved(account)
    _publish(user, "auth.updated", account)
    return account


@transaction.atomic
def account_activate(*, user, account_id: str) -> AuthAccount:
    account = account_get(user=user, account_id=account_id)
    _make_active(account)
    account.time_updated = now_ms()
    store.account_saved(account, fields=["active", "time_updated"])
    _publish(user, "auth.updated", account)
    return account


@transaction.atomic
def account_delete(*, user, account_id: str) -> AuthAccount:
    account = account_get(user=user, account_id=account_id)
    store.account_deleted(account)
    account.id = account_id  # delete() keeps the pk for CharField pks, but say it plainly
    _publish(user, "auth.removed", account)
    return account


def rotate_all() -> tuple[int, int]:
    """Re-encrypt every stored credential under the newest key. Returns (rotated, failed)."""
    rotated = failed = 0
    for account_id in store.all_account_ids():
        with transaction.atomic():
            account = store.account_locked(account_id)
            try:
                account.ciphertext = crypto.rotate(account.ciphertext)
            except crypto.CredentialDecryptError:
                log.warning("auth account %s cannot be decrypted with the configured keys; left as is", account.id)
                failed += 1
                continue
            store.account_saved(account, fields=["ciphertext"])
            rotated += 1
    return rotated, failed


# ---- opencode's auth.set / auth.remove (PUT/DELETE /auth/{providerID}) ------------------------------------

# A provider id as auth.set/auth.remove take it: no slash, backslash or NUL, not blank (ASCII white space:
# the same class in Python and in /doc's JSON Schema regex), at most 255 characters.
PROVIDER_ID_PATTERN = r"^[^/\\\x00]*[^/\\\x00 \t\n\r\f\v][^/\\\x00]*$"


def _provider_id(value) -> str:
    if not isinstance(value, str) or len(value) > 255 or not re.fullmatch(PROVIDER_ID_PATTERN, value):
        raise BadRequest(f"Invalid provider id: {value!r}", kind="Params",
                         issues=[{"path": ["providerID"], "message": "expected a provider id"}])
    return value


@transaction.atomic
def provider_auth_set(*, user, provider_id: str, credential) -> AuthAccount:
    """The TUI's "connect a provider": the credential becomes the user's active account for the provider,
    replacing the active one's credential (opencode keeps one credential per provider) or creating it."""
    provider_id = _provider_id(provider_id)
    clean = normalize_credential(credential, at=())
    current = store.active_account_locked(user=user, service_id=provider_id)
    if current is None:
        return account_create(user=user, service_id=provider_id, credential=clean, active=True,
                              description="connected from an opencode client")
    return account_update(user=user, account_id=current.id, credential=clean)


@transaction.atomic
def provider_auth_remove(*, user, provider_id: str) -> bool:
    """Disconnect a provider: every saved account of the user for it goes."""
    provider_id = _provider_id(provider_id)
    rows = store.accounts_locked(user=user, service_id=provider_id)
    if not rows:
        raise NotFound(f"No credentials stored for provider: {provider_id}")
    for account in rows:
        account_delete(user=user, account_id=account.id)
    return True
