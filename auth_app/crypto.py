"""Encryption at rest for stored credentials (provider keys, OAuth tokens, MCP secrets).

Keys come from settings.FERNET_KEYS (env AGENTSERVER_FERNET_KEYS, comma-separated, newest first). The newest
key encrypts; every listed key may decrypt, so keys can be rotated: add a new key in front, run
`manage.py rotate_credentials`, then drop the old one. When no key is configured, one is derived from
SECRET_KEY so the embedded default works out of the box — which means anyone holding SECRET_KEY (or the
data directory's secret_key file) can decrypt; set AGENTSERVER_FERNET_KEYS in production."""
import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class CredentialDecryptError(Exception):
    """No configured key opens this ciphertext (the key that wrote it was dropped)."""


def _as_fernet_key(raw: str) -> bytes:
    """A real Fernet key (urlsafe base64 of 32 bytes) is used as is; any other string is stretched with SHA-256,
    so operators may also pass passphrases."""
    try:
        if len(base64.urlsafe_b64decode(raw.encode())) == 32:
            return raw.encode()
    except (ValueError, TypeError):
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(raw.encode()).digest())


def derived_default_key() -> str:
    digest = hashlib.sha256(b"agentserver-credentials:" + settings.SECRET_KEY.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()


def configured_keys() -> list[str]:
    keys = [key for key in getattr(settings, "FERNET_KEYS", []) if key]
    return keys or [derived_default_key()]


def _multi() -> MultiFernet:
    return MultiFernet([Fernet(_as_fernet_key(key)) for key in configured_keys()])


def encrypt_json(value: dict) -> str:
    return _multi().encrypt(json.dumps(value, separators=(",", ":")).encode()).decode()


def decrypt_json(token: str) -> dict:
    try:
        return json.loads(_multi().decrypt(token.encode()))
    except InvalidToken as error:
        raise CredentialDecryptError("No configured key decrypts this credential") from error


def rotate(token: str) -> str:
    """Re-encrypt under the newest key (MultiFernet.rotate keeps the original timestamp)."""
    try:
        return _multi().rotate(token.encode()).decode()
    except InvalidToken as error:
        raise CredentialDecryptError("No configured key decrypts this credential") from error
