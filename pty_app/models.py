from django.conf import settings
from django.db import models

from agentserver.clock import now_ms  # noqa: F401 — migrations name it here
from agentserver.db.json_column import JSONField


class Pty(models.Model):
    """A running terminal. The process itself lives in one worker's PtyManager; this row lets every worker
    list it and find that owner (worker_channel) to route input, resize and kill through the channel layer.
    The row is deleted when the process exits or is removed, so only live terminals are listed."""

    id = models.CharField(primary_key=True, max_length=40)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ptys")
    # The runtime context directory it was created in: lists are filtered by it, events carry it.
    directory = models.CharField(max_length=4096)
    project_id = models.CharField(max_length=64, default="global")
    workspace_id = models.CharField(max_length=40, null=True, blank=True)
    title = models.CharField(max_length=1024)
    command = models.CharField(max_length=4096)
    args = JSONField(default=list)
    cwd = models.CharField(max_length=4096)
    status = models.CharField(max_length=16, default="running")
    pid = models.IntegerField(null=True, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    rows = models.IntegerField(default=24)
    cols = models.IntegerField(default=80)
    worker_id = models.CharField(max_length=255)
    worker_host = models.CharField(max_length=255)
    worker_pid = models.IntegerField()
    worker_channel = models.CharField(max_length=255)
    time_created = models.BigIntegerField(default=now_ms)
    time_updated = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["owner", "directory", "time_created"])]

    def __str__(self) -> str:
        return f"{self.id} ({self.title})"


class PtyTicket(models.Model):
    """A short-lived, single-use ticket that lets a WebSocket client that cannot send credentials (a browser)
    connect to one PTY as its owner (`?ticket=`). Only a hash is stored; using it deletes the row. `credential`
    is the id of the credential that asked for it (a token's pk, "session:<key>"): the socket is held under it
    and closes when that credential ends. Empty on tickets made before it was kept: held under the user."""

    key_hash = models.CharField(primary_key=True, max_length=64)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pty_tickets")
    pty_id = models.CharField(max_length=40)
    credential = models.CharField(max_length=120, default="")
    expires_at = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["expires_at"])]
