"""The audit log: append-only records, each chained to the one before by a hash (audit_app/chain.py), and the
chain's head, the one row every append locks so that appends chain in order."""
from django.db import models


class AuditRecord(models.Model):
    """One thing someone (or an agent on someone's behalf) did. Never updated or deleted, except by retention
    (audit_app/retention.py); on PostgreSQL a trigger refuses anything else (migration 0002).

    The id is the record's place in the chain, given under the head's lock: ids follow the chain and the
    database time (`time`, read under the same lock), so ordering by id is ordering by time. Who acted is
    kept as values, not foreign keys: a record outlives the person, token or session it names."""

    id = models.BigIntegerField(primary_key=True)
    time = models.DateTimeField()
    actor_person = models.BigIntegerField(null=True, blank=True)   # user id
    actor_name = models.CharField(max_length=150, blank=True)      # the username at the time
    actor_token = models.BigIntegerField(null=True, blank=True)    # API token id
    actor_address = models.CharField(max_length=64, blank=True)
    actor_user_agent = models.CharField(max_length=300, blank=True)
    actor_session = models.CharField(max_length=64, blank=True)    # "agent in session S on behalf of the person"
    action = models.CharField(max_length=64)
    object_type = models.CharField(max_length=64, blank=True)
    object_id = models.CharField(max_length=200, blank=True)
    outcome = models.CharField(max_length=16)
    session = models.CharField(max_length=64, blank=True)          # the agent session the record concerns
    details = models.TextField()                                   # canonical JSON, exactly as hashed
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        indexes = [
            models.Index(fields=["actor_person", "id"], name="audit_person_id"),
            models.Index(fields=["actor_name", "id"], name="audit_name_id"),
            models.Index(fields=["action", "id"], name="audit_action_id"),
            models.Index(fields=["object_type", "object_id", "id"], name="audit_object_id"),
            models.Index(fields=["session", "id"], name="audit_session_id"),
            models.Index(fields=["outcome", "id"], name="audit_outcome_id"),
            models.Index(fields=["time"], name="audit_time"),
            # PostgreSQL: a GIN index of the record's words, for the free-text filter (migration 0005).
        ]

    def __str__(self) -> str:
        return f"#{self.id} {self.action}"


class ChainHead(models.Model):
    """The chain's last position and hash: one row (id 1), locked by every append."""

    id = models.SmallIntegerField(primary_key=True)
    seq = models.BigIntegerField()
    hash = models.CharField(max_length=64)
