"""Reads of the managed policy: the policy that applies to a person (everyone's and their groups', merged by
policy_app/rules.py). Read afresh on every call, one query, so a change applies at the next step of every
running session (docs/policy.md has its cost)."""
from __future__ import annotations

from django.db.models import Q

from policy_app.models import Policy, scope_name
from policy_app.rules import EffectivePolicy, Scope


def _strings(value) -> tuple[str, ...]:
    return tuple(item.strip() for item in value if isinstance(item, str) and item.strip()) \
        if isinstance(value, list) else ()


def scope_of(row: Policy) -> Scope:
    group = row.group.name if row.group_id else None
    ceilings = row.permission_ceilings if isinstance(row.permission_ceilings, dict) else {}
    return Scope(
        name=scope_name(group), group=group, allowed_providers=_strings(row.allowed_providers),
        allowed_models=_strings(row.allowed_models), restrict_mcp=row.restrict_mcp,
        mcp_local_commands=_strings(row.mcp_local_commands), mcp_remote_urls=_strings(row.mcp_remote_urls),
        permission_ceilings={str(k): v for k, v in ceilings.items() if isinstance(v, str)},
        sharing_allowed=row.sharing_allowed, default_model=(row.default_model or "").strip(),
        max_steps=row.max_steps or None)


def policy_for_user_id(user_id: int | None) -> EffectivePolicy:
    """The policy of everyone plus that of each group the person is in (everyone's first, then by group name)."""
    where = Q(group__isnull=True)
    if user_id is not None:
        where |= Q(group__user__id=user_id)
    rows = Policy.objects.filter(where).select_related("group").distinct()
    scopes = sorted((scope_of(row) for row in rows), key=lambda s: (s.group is not None, s.group or ""))
    return EffectivePolicy(scopes=tuple(scopes))


def policy_for(user) -> EffectivePolicy:
    return policy_for_user_id(getattr(user, "pk", None))
