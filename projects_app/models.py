from django.conf import settings
from django.db import models

from agentserver.clock import now_ms  # noqa: F401 — migrations name it here
from agentserver.db.json_column import JSONField


class Project(models.Model):
    """A git repository (id = its root commit) or the `global` bucket for non-git directories, per owner."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects")
    project_id = models.CharField(max_length=64)
    worktree = models.CharField(max_length=4096)
    vcs = models.CharField(max_length=16, null=True, blank=True)
    name = models.CharField(max_length=255, null=True, blank=True)
    icon = JSONField(null=True, blank=True)
    commands = JSONField(null=True, blank=True)
    # The owner's config overrides for this project: the top layer of the effective config.
    config = JSONField(default=dict, blank=True)
    time_created = models.BigIntegerField(default=now_ms)
    time_updated = models.BigIntegerField(default=now_ms)
    time_initialized = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "project_id"], name="unique_project_per_owner")]
        indexes = [models.Index(fields=["owner", "time_updated"])]

    def __str__(self) -> str:
        return self.name or f"{self.project_id} ({self.worktree})"


class Workspace(models.Model):
    """A directory registered for work (v2): an existing directory, or a git worktree the server made."""

    id = models.CharField(primary_key=True, max_length=40)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="workspaces")
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="workspaces")
    type = models.CharField(max_length=32)
    name = models.CharField(max_length=255, blank=True, default="")
    directory = models.CharField(max_length=4096)
    branch = models.CharField(max_length=255, null=True, blank=True)
    metadata = JSONField(default=dict, blank=True)
    created_by_server = models.BooleanField(default=False)
    archived = models.BooleanField(default=False)
    time_created = models.BigIntegerField(default=now_ms)
    time_updated = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["owner", "project"])]

    def __str__(self) -> str:
        return self.name or self.id


class UserConfig(models.Model):
    """The user's global config layer (what ~/.config/opencode/opencode.json is to opencode)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_config")
    data = JSONField(default=dict, blank=True)
