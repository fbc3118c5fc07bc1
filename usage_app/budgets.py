"""Budgets, checked before every model call and every prompt: what a person has spent in the current day,
week and month (usage time zone) against the budgets that apply to them, and what their session has spent
against AGENTSERVER_USAGE_SESSION_CAP_USD.

Periods start on day boundaries, so a person's spend in each is the sum of their day totals (UsageDayTotal)
since its first day: exact, since a call's day total is added to in the transaction that counts it, and a
few rows whatever the number of records. The check reads what is committed, so on any worker of any host a
call starts only while the budget is not spent; the overshoot is at most the calls already under way, each
counted when it ends."""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from agentserver.errors import BudgetExceeded
from agentserver.events import publisher as events
from providers_app.errors import ProviderCallError
from usage_app import store
from usage_app.models import PERIODS
from usage_app.periods import day_start
from usage_app.selectors import (
    UsageFilter,
    check_usage_scope,
    group_memberships,
    people_named,
)
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


@dataclass(frozen=True)
class AppliedBudget:
    scope: str
    period: str
    amount: Decimal
    warn_percent: int
    group_name: str | None


def budgets_of(person_id: int) -> dict[str, AppliedBudget]:
    return _applying(AppliedBudget(*row) for row in store.budget_rows_of(person_id))


def _applying(budgets: Iterable[AppliedBudget]) -> dict[str, AppliedBudget]:
    """Of the budgets a person is under, the one that applies per period: their own, else the tightest of
    their groups' and everyone's."""
    own: dict[str, AppliedBudget] = {}
    shared: dict[str, AppliedBudget] = {}
    for budget in budgets:
        chosen = own if budget.scope == "person" else shared
        if budget.period not in chosen or budget.amount < chosen[budget.period].amount:
            chosen[budget.period] = budget
    return {period: own.get(period) or shared[period] for period in PERIODS if period in own or period in shared}


def _label(budget: AppliedBudget) -> str:
    words = PERIOD_WORDS[budget.period]
    if budget.scope == "person":
        return f"your {words} budget"
    if budget.scope == "group":
        return f"the {words} budget of group {budget.group_name}"
    return f"the {words} budget for everyone"


def _person_spent(person_id: int, starts: dict[str, dt.datetime]) -> dict[str, float]:
    """Cost in the current day, week and month (each starts on a day boundary): the person's day totals."""
    local = [starts[period].astimezone(usage_zone()).date() for period in PERIODS]
    spent = store.person_spent_since(person_id, *local, min(local[1:])) or (0, 0, 0)
    return {period: float(spent[i] or 0) for i, period in enumerate(PERIODS)}


def _session_spent(session_id: str) -> float:
    """What the session's ended calls cost: its day sums (UsageDay counts each call as it ends)."""
    return float(store.session_spent(session_id) or 0)


def limits(*, person_id: int, session_id: str | None, now: dt.datetime | None = None) -> list[Limit]:
    now = now or dt.datetime.now(dt.UTC)
    found: list[Limit] = []
    budgets = budgets_of(person_id)
    if budgets:
        bounds = {period: period_bounds(period, now) for period in PERIODS}
        spent = _person_spent(person_id, {period: start for period, (start, _) in bounds.items()})
        found += [Limit(_label(budget), float(budget.amount), spent[period], bounds[period][1],
                        budget.warn_percent) for period, budget in budgets.items()]
    cap = float(getattr(settings, "USAGE_SESSION_CAP_USD", 0) or 0)
    if cap > 0 and session_id:
        found.append(Limit("this session's cap", cap, _session_spent(session_id), None))
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


@dataclass(frozen=True)
class Standing:
    """One person's most spent budget, for the admin's dashboard."""
    person_id: int
    person: str
    budget: str  # "daily, their own", "monthly, group staff", "weekly, everyone's"
    limit: Limit


def _scope_words(budget: AppliedBudget) -> str:
    whose = {"person": "their own", "group": f"group {budget.group_name}"}.get(budget.scope, "everyone's")
    return f"{PERIOD_WORDS[budget.period]}, {whose}"


def nearest_budgets(*, viewer, wanted: UsageFilter, count: int = 10,
                    now: dt.datetime | None = None) -> list[Standing]:
    """The people `viewer` may see (usage_app.selectors.check_usage_scope: the filter's person or group, or
    everyone for staff; a person not staff only themselves) who have spent most of a budget now (in percent;
    past 100 when it is spent), most first, each with the budget of theirs that is most spent. A handful of
    queries whatever the number of people: the budgets, who is under them, and what each person spent this
    day, week and month (their day totals), summed per person."""
    person_id, group = check_usage_scope(viewer=viewer, wanted=wanted)
    if person_id is not None:
        person_ids: set[int] | None = {person_id}
    elif group is not None:
        person_ids = set(group.user_set.values_list("id", flat=True))
    else:
        person_ids = None
    budgets = store.every_budget_row()
    if not budgets:
        return []
    group_ids = {row[5] for row in budgets if row[0] == "group"}
    names = people_named(person_ids, everyone=any(row[0] == "everyone" for row in budgets),
                         persons={row[6] for row in budgets if row[0] == "person"}, group_ids=group_ids)
    memberships = group_memberships(group_ids, set(names))
    now = now or dt.datetime.now(dt.UTC)
    bounds = {period: period_bounds(period, now) for period in PERIODS}
    spent = _spent_per_person(set(names) if person_ids is not None else None,
                              {period: start for period, (start, _) in bounds.items()})
    standings = []
    for person_id, name in names.items():
        applying = _applying(AppliedBudget(scope, period, amount, warn, group_name)
                             for scope, period, amount, warn, group_name, group_id, owner in budgets
                             if scope == "everyone" or (scope == "group" and group_id in memberships.get(person_id, ()))
                             or (scope == "person" and owner == person_id))
        limits = [(Limit(_label(budget), float(budget.amount), spent.get(person_id, {}).get(period, 0.0),
                         bounds[period][1], budget.warn_percent), budget) for period, budget in applying.items()]
        limits = [(limit, budget) for limit, budget in limits if limit.spent > 0]
        if limits:
            limit, budget = max(limits, key=lambda pair: pair[0].spent / pair[0].amount)
            standings.append(Standing(person_id, name, _scope_words(budget), limit))
    standings.sort(key=lambda standing: (-standing.limit.spent / standing.limit.amount, standing.person))
    return standings[:count]


def _spent_per_person(person_ids: set[int] | None, starts: dict[str, dt.datetime]) -> dict[int, dict[str, float]]:
    """What each person spent this day, week and month: their day totals, summed per person in one query."""
    local = {period: start.astimezone(usage_zone()).date() for period, start in starts.items()}
    return store.spent_per_person(person_ids, local)
