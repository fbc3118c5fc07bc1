"""Budgets, checked before every model call and every prompt: what a person has spent in the current day,
week and month (usage time zone; records and rolled-up days alike) against the budgets that apply to them,
and what their session has spent against AGENTSERVER_USAGE_SESSION_CAP_USD.

The check reads what is committed, so on any worker of any host a call starts only while the budget is not
spent; the overshoot is at most the calls already under way, each counted when it ends."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q, Sum

from agentserver import events
from agentserver.errors import BudgetExceeded
from providers_app.errors import ProviderCallError
from usage_app.models import PERIODS, Budget, UsageDay, UsageRecord
from usage_app.periods import day_start
from usage_app.zone import usage_zone

PERIOD_WORDS = {"day": "daily", "week": "weekly", "month": "monthly"}


@dataclass(frozen=True)
class Limit:
    label: str                     # "your daily budget", "the weekly budget of group staff", "this session's cap"
    amount: float
    spent: float
    resets_at: dt.datetime | None  # None: never (a session's cap)
    warn_percent: int = 80

    @property
    def percent(self) -> int:
        return int(self.spent * 100 / self.amount) if self.amount else 100

    @property
    def warning(self) -> bool:
        return self.spent >= self.amount * self.warn_percent / 100

    @property
    def message(self) -> str:
        resets = (f"; it resets at {self.resets_at.strftime('%Y-%m-%d %H:%M %Z')}" if self.resets_at
                  else "; start a new session to go on")
        return f"Usage budget spent: {self.label} is {_usd(self.amount)} and {_usd(self.spent)} is spent{resets}"

    def details(self) -> dict:
        return {"budget": self.label, "amountUSD": f"{self.amount:.4f}", "spentUSD": f"{self.spent:.4f}",
                **({"resetsAt": self.resets_at.isoformat()} if self.resets_at else {})}


def _usd(amount: float) -> str:
    return f"${amount:.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"


class BudgetSpent(ProviderCallError):
    """A model call refused because a budget is spent: on the assistant message as opencode's APIError (not
    retryable), so every client shows it as it shows a provider's refusal."""

    def __init__(self, limit: Limit):
        super().__init__(limit.message, status_code=429, is_retryable=False)
        self.limit = limit

    def named(self) -> dict:
        named = super().named()
        named["data"]["metadata"] = self.limit.details()
        return named


def period_bounds(period: str, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The calendar period (usage time zone) `now` lies in: [start, next start)."""
    today = now.astimezone(usage_zone()).date()
    if period == "day":
        first, after = today, today + dt.timedelta(days=1)
    elif period == "week":
        first = today - dt.timedelta(days=today.weekday())
        after = first + dt.timedelta(days=7)
    else:
        first = today.replace(day=1)
        after = (first + dt.timedelta(days=32)).replace(day=1)
    return day_start(first), day_start(after)


def budgets_of(person_id: int) -> dict[str, Budget]:
    """The budget that applies per period: the person's own, else the tightest of their groups' and everyone's."""
    found = Budget.objects.filter(Q(scope="everyone") | Q(scope="person", person_id=person_id)
                                  | Q(scope="group", group__user__id=person_id)).select_related("group")
    own: dict[str, Budget] = {}
    shared: dict[str, Budget] = {}
    for budget in found:
        chosen = own if budget.scope == "person" else shared
        if budget.period not in chosen or budget.amount < chosen[budget.period].amount:
            chosen[budget.period] = budget
    return {period: own.get(period) or shared[period] for period in PERIODS if period in own or period in shared}


def _label(budget: Budget) -> str:
    words = PERIOD_WORDS[budget.period]
    if budget.scope == "person":
        return f"your {words} budget"
    if budget.scope == "group":
        return f"the {words} budget of group {budget.group.name}"
    return f"the {words} budget for everyone"


def _spent_since(starts: dict[str, dt.datetime], **who) -> dict[str, float]:
    """Cost since each start, from the records and the rolled-up days (whose days start on boundaries)."""
    earliest = min(starts.values())
    records = UsageRecord.objects.filter(at__gte=earliest, **who).aggregate(
        **{f"spent_{name}": Sum("cost", filter=Q(at__gte=start)) for name, start in starts.items()})
    local = {name: start.astimezone(usage_zone()).date() for name, start in starts.items()}
    days = UsageDay.objects.filter(day__gte=min(local.values()), **who).aggregate(
        **{f"spent_{name}": Sum("cost", filter=Q(day__gte=day)) for name, day in local.items()})
    return {name: float(records[f"spent_{name}"] or 0) + float(days[f"spent_{name}"] or 0) for name in starts}


def limits(*, person_id: int, session_id: str | None, now: dt.datetime | None = None) -> list[Limit]:
    now = now or dt.datetime.now(dt.timezone.utc)
    found: list[Limit] = []
    budgets = budgets_of(person_id)
    if budgets:
        bounds = {period: period_bounds(period, now) for period in budgets}
        spent = _spent_since({period: start for period, (start, _) in bounds.items()}, person_key=person_id)
        found += [Limit(_label(budget), float(budget.amount), spent[period], bounds[period][1],
                        budget.warn_percent) for period, budget in budgets.items()]
    cap = float(getattr(settings, "USAGE_SESSION_CAP_USD", 0) or 0)
    if cap > 0 and session_id:
        spent = _spent_since({"session": dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)}, session_id=session_id)
        found.append(Limit("this session's cap", cap, spent["session"], None))
    return found


def spent_limit(*, person_id: int, session_id: str | None) -> Limit | None:
    """The first budget that is spent, or None."""
    return next((limit for limit in limits(person_id=person_id, session_id=session_id)
                 if limit.spent >= limit.amount), None)


def check_model_call(*, person_id: int, session_id: str | None) -> None:
    """Before a model call: BudgetSpent (a provider error the turn ends with) when a budget is spent."""
    limit = spent_limit(person_id=person_id, session_id=session_id)
    if limit is not None:
        raise BudgetSpent(limit)


def check_prompt_allowed(*, person_id: int, session_id: str | None) -> None:
    """Before a prompt is stored: a 429 BudgetExceededError when a budget is spent."""
    limit = spent_limit(person_id=person_id, session_id=session_id)
    if limit is not None:
        raise BudgetExceeded(limit.message, **limit.details())


def budget_status(*, person_id: int) -> list[Limit]:
    """The budgets that apply to a person now, with what is spent (their account page)."""
    return limits(person_id=person_id, session_id=None)


def publish_crossed_warnings(*, person_id: int, cost: float) -> None:
    """After a call of `cost` was counted (in its transaction): a `usage.budget.warning` event to the person for
    each budget whose warning threshold this call crossed (or whose amount it reached), on commit."""
    if cost <= 0:
        return
    for limit in limits(person_id=person_id, session_id=None):
        for threshold, kind in ((limit.amount * limit.warn_percent / 100, "warning"), (limit.amount, "spent")):
            if limit.spent - cost < threshold <= limit.spent:
                events.publish("usage.budget.warning", {"kind": kind, "message": limit.message if kind == "spent"
                                                        else f"{limit.percent}% of {limit.label} is spent",
                                                        "percent": limit.percent, **limit.details()},
                               owner_id=person_id)
