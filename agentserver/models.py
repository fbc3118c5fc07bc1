from django.db import models

from agentserver.db.json_column import JSONField


class EventLog(models.Model):
    """Durable log of published events (token deltas excluded), for Last-Event-ID replay."""

    owner_id = models.BigIntegerField()  # indexed as the head of (owner_id, id)
    type = models.CharField(max_length=64)
    directory = models.CharField(max_length=4096, null=True, blank=True)
    project_id = models.CharField(max_length=64, null=True, blank=True)
    workspace_id = models.CharField(max_length=40, null=True, blank=True)
    event_id = models.CharField(max_length=40)
    properties = JSONField()
    time = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["owner_id", "id"])]
