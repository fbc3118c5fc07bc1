from django.conf import settings
from django.db import models

from agentserver.clock import now_ms as _now_ms  # noqa: F401 — migrations name it here




class OAuthPending(models.Model):
    """An OAuth authorization started by `provider.oauth.authorize` and not yet completed by its callback.
    The PKCE verifier is stored encrypted (auth_app.crypto); one pending flow per user and provider."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_pending")
    provider_id = models.CharField(max_length=255)
    method = models.PositiveSmallIntegerField()
    state = models.CharField(max_length=128)
    secret = models.TextField()
    time_created = models.BigIntegerField(default=_now_ms)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "provider_id"], name="one_oauth_flow_per_provider")]

    def __str__(self) -> str:
        return f"{self.provider_id} (method {self.method})"


class McpServer(models.Model):
    """An MCP server added at runtime with `mcp.server.create`, on top of the config's `mcp` map, for one user in
    one project. The config (which may carry headers and environment secrets) is stored Fernet-encrypted."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_servers")
    project_id = models.CharField(max_length=255)
    name = models.CharField(max_length=255)
    ciphertext = models.TextField()
    time_created = models.BigIntegerField(default=_now_ms)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "project_id", "name"], name="one_mcp_server_per_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.project_id})"
