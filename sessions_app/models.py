"""The session store: sessions, their messages and parts, todos, shares, and the runtime records
(permission requests, questions, leases) the agent runner coordinates through.

Messages and parts keep their whole wire record in a JSON column (`info` / `data`): the shapes are
opencode's and evolve with it, while the columns beside them carry only what queries filter or sort on."""
from django.conf import settings
from django.db import models

from agentserver.db.json_column import JSONField
from projects_app.models import now_ms


def _empty_tokens() -> dict:
    return {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}


class Session(models.Model):
    id = models.CharField(primary_key=True, max_length=64)
    # Indexed as the head of session_owner_project_upd (a separate index only cost every write).
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_sessions",
                              db_index=False)
    project_id = models.CharField(max_length=64)
    directory = models.CharField(max_length=4096)
    # The directory relative to the project's worktree ("" at its top): the list filter for subfolders.
    path = models.CharField(max_length=4096, blank=True, default="")
    workspace_id = models.CharField(max_length=64, null=True, blank=True)
    parent_id = models.CharField(max_length=64, null=True, blank=True)
    title = models.CharField(max_length=1024)
    slug = models.CharField(max_length=128, blank=True, default="")
    version = models.CharField(max_length=32)
    agent = models.CharField(max_length=128, null=True, blank=True)
    model = JSONField(null=True, blank=True)
    permission = JSONField(default=list, blank=True)
    metadata = JSONField(default=dict, blank=True)
    summary = JSONField(null=True, blank=True)
    revert = JSONField(null=True, blank=True)
    cost = models.FloatField(default=0)
    tokens = JSONField(default=_empty_tokens, blank=True)
    time_created = models.BigIntegerField(default=now_ms)
    time_updated = models.BigIntegerField(default=now_ms)
    time_archived = models.BigIntegerField(null=True, blank=True)
    time_compacting = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["owner", "project_id", "time_updated"], name="session_owner_project_upd"),
            models.Index(fields=["parent_id"], name="session_parent"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.title}"


class Message(models.Model):
    id = models.CharField(primary_key=True, max_length=64)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages",
                                db_index=False)  # the head of message_session_id
    role = models.CharField(max_length=16)
    info = JSONField()
    time_created = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["session", "id"], name="message_session_id")]


class Part(models.Model):
    id = models.CharField(primary_key=True, max_length=64)
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="parts",
                                db_index=False)  # the head of part_message_id
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="parts")
    type = models.CharField(max_length=32)
    data = JSONField()

    class Meta:
        indexes = [models.Index(fields=["message", "id"], name="part_message_id")]


class Todo(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="todos")
    position = models.IntegerField()
    content = models.TextField()
    status = models.CharField(max_length=32)
    priority = models.CharField(max_length=32)
    # Seed-era todos carry an id; 1.18 dropped it. Kept when a tool supplies one.
    todo_id = models.CharField(max_length=64, null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["session", "position"], name="todo_session_position")]


class Share(models.Model):
    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="share")
    slug = models.CharField(max_length=64, unique=True)
    secret = models.CharField(max_length=128)
    url = models.CharField(max_length=4096)
    time_created = models.BigIntegerField(default=now_ms)


class PermissionRequest(models.Model):
    id = models.CharField(primary_key=True, max_length=64)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="permission_requests")
    permission = models.CharField(max_length=128)
    patterns = JSONField(default=list, blank=True)
    metadata = JSONField(default=dict, blank=True)
    always = JSONField(default=list, blank=True)
    tool = JSONField(null=True, blank=True)
    status = models.CharField(max_length=16, default="pending")
    reply = models.CharField(max_length=16, null=True, blank=True)
    message = models.TextField(null=True, blank=True)
    time_created = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["session", "status"], name="permreq_session_status")]


class PermissionApproval(models.Model):
    """An "always" answer, remembered for the owner's whole project."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="permission_approvals")
    project_id = models.CharField(max_length=64)
    permission = models.CharField(max_length=128)
    pattern = models.CharField(max_length=4096)
    time_created = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["owner", "project_id", "permission"], name="approval_owner_project")]


class Question(models.Model):
    id = models.CharField(primary_key=True, max_length=64)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="questions")
    questions = JSONField(default=list)
    tool = JSONField(null=True, blank=True)
    status = models.CharField(max_length=16, default="pending")
    answers = JSONField(null=True, blank=True)
    time_created = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["session", "status"], name="question_session_status")]


class TurnSlot(models.Model):
    """A root session's place in its owner's line for a turn, when the server caps how many turns one person
    runs at once (AGENTSERVER_MAX_TURNS_PER_PERSON). `granted`: its turn runs. A slot counts only while the
    session's lease is live, so a dead worker's slots free themselves when its leases expire."""

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True, related_name="turn_slot")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    queued_at = models.BigIntegerField()
    granted = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["owner", "queued_at"], name="turn_slot_line")]


class SessionLease(models.Model):
    """Which worker runs a session's agent loop, until when; its row is the session's non-idle status."""

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True, related_name="lease")
    holder = models.CharField(max_length=128)
    expires_at = models.BigIntegerField()
    status = JSONField(default=dict)
    updated = models.BigIntegerField(default=now_ms)

    class Meta:
        indexes = [models.Index(fields=["expires_at"], name="lease_expires")]
