from django.conf import settings
from django.db import models

from agentserver.clock import now_ms  # noqa: F401 — migrations name it here


class AllowedRoot(models.Model):
    """A directory tree a user may work in. The first one (lowest position) is the user's default."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="roots")
    path = models.CharField(max_length=4096)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [models.UniqueConstraint(fields=["user", "path"], name="unique_root_per_user")]

    def __str__(self) -> str:
        return self.path


class ApiToken(models.Model):
    """An API credential. Only a SHA-256 of the secret is stored; the secret is shown once at creation."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, default="default")
    prefix = models.CharField(max_length=16, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)
    # None: until revoked. From then on the token authenticates nowhere, and its open connections close.
    expires = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class TokenAddress(models.Model):
    """An address a token was used from: its first use from each is an audit record (auth_app/token_use.py)."""

    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="addresses")
    address = models.CharField(max_length=64)
    first_seen = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["token", "address"], name="token_address_once")]




class AuthAccount(models.Model):
    """A saved credential for one service (an AI provider, an MCP server...). The credential is stored only
    as Fernet ciphertext (auth_app/crypto.py); `masked` and `fingerprint` are what anyone ever sees of it."""

    id = models.CharField(primary_key=True, max_length=40)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="auth_accounts")
    service_id = models.CharField(max_length=255)
    description = models.CharField(max_length=1000, blank=True, default="")
    credential_type = models.CharField(max_length=16)
    ciphertext = models.TextField()
    masked = models.CharField(max_length=64, blank=True, default="")
    fingerprint = models.CharField(max_length=80, blank=True, default="")
    active = models.BooleanField(default=False)
    time_created = models.BigIntegerField(default=now_ms)
    time_updated = models.BigIntegerField(default=now_ms)

    class Meta:
        ordering = ["service_id", "id"]
        indexes = [models.Index(fields=["owner", "service_id"])]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "service_id"], condition=models.Q(active=True),
                name="one_active_account_per_service",
            )
        ]

    def __str__(self) -> str:
        return f"{self.service_id}: {self.description or self.masked or self.id}"
