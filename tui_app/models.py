from django.conf import settings
from django.db import models

from agentserver.clock import now_ms
from agentserver.db.json_column import JSONField


class TuiControlRequest(models.Model):
    """A `/tui/*` call waiting for the caller's own control client (`tui.control.next` hands it out,
    `tui.control.response` answers it). Kept briefly: a queue nobody reads must not grow."""

    id = models.CharField(primary_key=True, max_length=40)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tui_requests")
    path = models.CharField(max_length=255)
    body = JSONField(null=True, blank=True)
    state = models.CharField(max_length=16, default="pending")  # pending → claimed → answered
    response = JSONField(null=True, blank=True)
    time_created = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["owner", "state", "id"])]
