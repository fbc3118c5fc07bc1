"""Reads of the managed policy: the policy that applies to a person (everyone's and their groups', merged by
policy_app/rules.py). One query, read afresh for every request and every step of a turn, so a change applies
at the next step of every running session (docs/policy.md has its cost)."""
from __future__ import annotations

from django.db.models import Q

from agentserver.db import read_once, sql
from policy_app.models import Policy, scope_name
from policy_app.rules import EffectivePolicy, Scope

FIELDS = ("allowed_providers", "allowed_models", "restrict_mcp", "mcp_local_commands", "mcp_remote_urls",
          "permission_ceilings", "sharing_allowed", "default_model", "max_steps")


def _strings(value) -> tuple[str, ...]:
    return tuple(item.strip() for item in value if isinstance(item, str) and item.strip()) \
        if isinstance(value, list) else ()


def scope_of(row: Policy) -> Scope:
    return _scope(row.group.name if row.group_id else None, *(getattr(row, name) for name in FIELDS))


def _scope(group: str | None, providers, models, restrict_mcp, local_commands, remote_urls, ceilings, sharing,
           default_model, max_steps) -> Scope:
    ceilings = ceilings if isinstance(ceilings, dict) else {}
    return Scope(
        name=scope_name(group), group=group, allowed_providers=_strings(providers), allowed_models=_strings(models),
        restrict_mcp=bool(restrict_mcp), mcp_local_commands=_strings(local_commands),
        mcp_remote_urls=_strings(remote_urls),
        permission_ceilings={str(k): v for k, v in ceilings.items() if isinstance(v, str)},
        sharing_allowed=sharing, default_model=(default_model or "").strip(), max_steps=max_steps or None)


# Read at every prompt, step and permission check: compiled once (agentserver.db.sql.Query).
_ROWS = sql.Query(
    lambda user_id: Policy.objects.filter(Q(group__isnull=True) | Q(group__user__id=user_id))
    .values_list("group__name", *FIELDS))


def policy_for_user_id(user_id: int | None, *, fresh: bool = False) -> EffectivePolicy:
    """The policy of everyone plus that of each group the person is in (everyone's first, then by group name).
    Read once per request and per step of a turn (agentserver.db.read_once), which read it for the effective
    config, the provider entries, the model check and the step's tools; `fresh`: read now all the same (a
    permission check, to which a change applies at once)."""
    if fresh:
        return _read_policy(user_id)
    return read_once.remembered(("policy", user_id), lambda: _read_policy(user_id))


def _read_policy(user_id: int | None) -> EffectivePolicy:
    rows = _ROWS.all(user_id if user_id is not None else 0)
    scopes = sorted((_scope(*row) for row in rows), key=lambda s: (s.group is not None, s.group or ""))
    return EffectivePolicy(scopes=tuple(scopes))


def policy_for(user) -> EffectivePolicy:
    return policy_for_user_id(getattr(user, "pk", None))
