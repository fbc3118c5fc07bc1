"""A record of every model call; the totals per day, person and model kept up to date as each call is counted;
and the per-day sums per session that old records are rolled up into.

Sessions and messages are named by plain ids, not foreign keys: the records outlive the sessions (a deleted
session's calls were still paid for). The person is a foreign key that becomes NULL when the user is deleted,
with the user's id kept in `person_key`, so the money spent by a departed person still adds up per person."""
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

# "in_flight": written when the request goes out, ended in the step's transaction; a dead worker's are ended
# "aborted" by the worker that adopts its session, or by any worker's sweep (usage_app.services
# .do_end_dead_calls). Sums count a call once it has ended.
OUTCOMES = ("in_flight", "completed", "error", "aborted")
IN_FLIGHT = "in_flight"
# A call is ended by its worker, or, when that worker is taken for dead, by a sweep (ended aborted, nothing
# used). A worker that was alive after all (paused past its heartbeat, say) still ends its call: its ending
# replaces the sweep's, and the sums take back what the sweep counted (usage_app.store).
BY_WORKER, BY_SWEEP, BY_WORKER_AFTER_SWEEP = "worker", "sweep", "worker_after_sweep"
ENDED_BY = (BY_WORKER, BY_SWEEP, BY_WORKER_AFTER_SWEEP)
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
    worker = models.CharField(max_length=255, blank=True)     # the worker that made the call (WORKER_ID)
    # Who ended it: its worker, or the sweep that took that worker for dead (ENDED_BY); a raw INSERT gets the
    # database's default.
    ended_by = models.CharField(max_length=24, choices=_choices(ENDED_BY), default=BY_WORKER, db_default=BY_WORKER)

    class Meta:
        indexes = [
            models.Index(fields=["person_key", "at"], name="usage_person_at"),
            models.Index(fields=["at"], name="usage_at"),
            models.Index(fields=["session_id"], name="usage_session"),
            models.Index(fields=["provider_id", "model_id", "at"], name="usage_model_at"),
            # Only the calls under way: what every worker's sweep for dead workers' calls reads.
            models.Index(fields=["worker"], condition=Q(outcome=IN_FLIGHT), name="usage_in_flight"),
        ]

    def __str__(self) -> str:
        return f"{self.call_id} {self.provider_id}/{self.model_id} {self.outcome}"


class DaySums(models.Model):
    """The sums of a day's ended calls that both day tables keep (usage_app.store adds each call to both)."""
    day = models.DateField()
    person_key = models.IntegerField()
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
        abstract = True

    def __str__(self) -> str:
        return f"{self.day} {self.person_key} {self.provider_id}/{self.model_id}"


class UsageDay(DaySums):
    """Every ended call of one day (in AGENTSERVER_USAGE_TIME_ZONE) of one person, session and model, summed:
    added to in the transaction that counts the call (usage_app.store), so it outlives the records
    (`manage.py usage rollup` removes old ones). What the queries by session read for whole days."""
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                               related_name="usage_days")
    session_id = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["day", "person_key", "session_id", "provider_id", "model_id"],
                                               name="usage_day_one_row_per_key")]
        indexes = [
            models.Index(fields=["person_key", "day"], name="usage_day_person"),
            models.Index(fields=["day"], name="usage_day_day"),
            models.Index(fields=["session_id"], name="usage_day_session"),
        ]


class UsageDayTotal(DaySums):
    """Every ended call of one day (in AGENTSERVER_USAGE_TIME_ZONE) of one person and model, summed: added to
    in the transaction that counts the call (usage_app.store), as UsageDay is. What the charts, the totals
    and the budgets read for whole days; a few rows per person and day."""

    class Meta:
        constraints = [models.UniqueConstraint(fields=["day", "person_key", "provider_id", "model_id"],
                                               name="usage_total_one_row_per_key")]
        indexes = [models.Index(fields=["person_key", "day"], name="usage_total_person_day")]


SCOPES = ("everyone", "group", "person")
PERIODS = ("day", "week", "month")
MAX_BUDGET_USD = Decimal("1000000")


class Budget(models.Model):
    """What may be spent on model calls per calendar day, week (from Monday) or month, in the usage time zone.
    For one person, the budgets of a period that apply are their own if they have one, else the tightest of
    their groups' and everyone's. A deleted group or person takes its budgets with it."""
    scope = models.CharField(max_length=16, choices=_choices(SCOPES))
    group = models.ForeignKey(Group, on_delete=models.CASCADE, null=True, blank=True, related_name="usage_budgets")
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True,
                               related_name="usage_budgets")
    period = models.CharField(max_length=8, choices=_choices(PERIODS))
    amount = models.DecimalField(
        "amount (USD)", max_digits=10, decimal_places=2,
        validators=[MinValueValidator(Decimal("0.01")), MaxValueValidator(MAX_BUDGET_USD)])
    warn_percent = models.PositiveSmallIntegerField(
        "warn at (%)", default=80, validators=[MinValueValidator(1), MaxValueValidator(100)])

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0) & Q(amount__lte=MAX_BUDGET_USD),
                                   name="usage_budget_amount_sane"),
            models.CheckConstraint(condition=(Q(scope="everyone", group__isnull=True, person__isnull=True)
                                              | Q(scope="group", group__isnull=False, person__isnull=True)
                                              | Q(scope="person", group__isnull=True, person__isnull=False)),
                                   name="usage_budget_scope_has_its_target"),
            models.UniqueConstraint(fields=["period"], condition=Q(scope="everyone"),
                                    name="usage_budget_one_for_everyone"),
            models.UniqueConstraint(fields=["group", "period"], condition=Q(scope="group"),
                                    name="usage_budget_one_per_group"),
            models.UniqueConstraint(fields=["person", "period"], condition=Q(scope="person"),
                                    name="usage_budget_one_per_person"),
        ]

    def clean(self) -> None:
        wanted = {"everyone": (False, False), "group": (True, False), "person": (False, True)}.get(self.scope)
        if wanted is not None and (self.group_id is not None, self.person_id is not None) != wanted:
            raise ValidationError({"scope": "A group budget names a group, a person's budget a person, and "
                                             "a budget for everyone neither"})

    def __str__(self) -> str:
        target = {"group": f"group {self.group}", "person": f"{self.person}"}.get(self.scope, "everyone")
        return f"{target}: ${self.amount} per {self.period}"
