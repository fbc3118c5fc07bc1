"""A record of every model call, and the per-day sums older records are rolled up into.

Sessions and messages are named by plain ids, not foreign keys: the records outlive the sessions (a deleted
session's calls were still paid for). The person is a foreign key that becomes NULL when the user is deleted,
with the user's id kept in `person_key`, so the money spent by a departed person still adds up per person."""
from django.conf import settings
from django.db import models

OUTCOMES = ("completed", "error", "aborted")
PURPOSES = ("step", "title", "compaction", "subagent")
CREDENTIALS = ("account", "server", "config", "none")


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


class UsageRecord(models.Model):
    call_id = models.CharField(max_length=64, unique=True)  # one per model call: a second write is ignored
    at = models.DateTimeField()                               # when the call started
    day = models.DateField()                                  # its calendar day in the usage time zone
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                               related_name="usage_records")
    person_key = models.IntegerField()                        # the user's id, kept when the user is deleted
    session_id = models.CharField(max_length=64)
    message_id = models.CharField(max_length=64, blank=True)
    agent = models.CharField(max_length=128, blank=True)
    purpose = models.CharField(max_length=16, choices=_choices(PURPOSES))
    provider_id = models.CharField(max_length=255)
    model_id = models.CharField(max_length=255)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    reasoning_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cost = models.FloatField(default=0.0)                    # USD, from the catalog's prices
    priced = models.BooleanField(default=True)               # False: the catalog had no price, cost is 0
    usage_reported = models.BooleanField(default=True)       # False: the provider sent no usage
    credential = models.CharField(max_length=16, choices=_choices(CREDENTIALS))
    duration_ms = models.IntegerField(default=0)
    outcome = models.CharField(max_length=16, choices=_choices(OUTCOMES))

    class Meta:
        indexes = [
            models.Index(fields=["person_key", "at"], name="usage_person_at"),
            models.Index(fields=["at"], name="usage_at"),
            models.Index(fields=["session_id"], name="usage_session"),
            models.Index(fields=["provider_id", "model_id", "at"], name="usage_model_at"),
        ]

    def __str__(self) -> str:
        return f"{self.call_id} {self.provider_id}/{self.model_id} {self.outcome}"


class UsageDay(models.Model):
    """The records of one day (in AGENTSERVER_USAGE_TIME_ZONE) of one person, session and model, summed
    (`manage.py usage rollup`). The queries read these and the records alike."""
    day = models.DateField()
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                               related_name="usage_days")
    person_key = models.IntegerField()
    session_id = models.CharField(max_length=64)
    provider_id = models.CharField(max_length=255)
    model_id = models.CharField(max_length=255)
    calls = models.BigIntegerField(default=0)
    failed_calls = models.BigIntegerField(default=0)          # outcome error or aborted
    unpriced_calls = models.BigIntegerField(default=0)
    unreported_calls = models.BigIntegerField(default=0)      # the provider sent no usage
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    reasoning_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    duration_ms = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["day", "person_key", "session_id", "provider_id", "model_id"],
                                               name="usage_day_one_row_per_key")]
        indexes = [
            models.Index(fields=["person_key", "day"], name="usage_day_person"),
            models.Index(fields=["day"], name="usage_day_day"),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.person_key} {self.provider_id}/{self.model_id}"
