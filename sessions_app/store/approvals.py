"""Remembered `always` approvals (PermissionApproval): a person's permission patterns allowed for a project,
read for every turn, added by an `always` reply, listed and forgotten through the v2 routes."""
from __future__ import annotations

from agentserver.db import sql
from sessions_app.models import PermissionApproval

# Read for every turn: compiled once (agentserver.db.sql.Query).
_PATTERNS = sql.Query(
    lambda owner_id, project_id: (PermissionApproval.objects.filter(owner_id=owner_id, project_id=project_id)
                                  .order_by("id").values_list("permission", "pattern")))


def patterns_of(*, owner_id: int, project_id: str) -> list[tuple[str, str]]:
    """(permission, pattern) of the approvals the owner remembered for the project, oldest first."""
    return _PATTERNS.all(owner_id, project_id)


def remember(*, owner_id: int, project_id: str, permission: str, pattern: str) -> None:
    PermissionApproval.objects.get_or_create(owner_id=owner_id, project_id=project_id, permission=permission,
                                             pattern=pattern)


def approvals_of_owner(*, user, project_id: str | None = None) -> list[PermissionApproval]:
    """The user's approvals, oldest first; of one project."""
    rows = PermissionApproval.objects.filter(owner=user).order_by("id")
    if project_id is not None:
        rows = rows.filter(project_id=project_id)
    return list(rows)


def forget(*, user, approval_id: int) -> bool:
    """Whether the user had that approval."""
    deleted, _ = PermissionApproval.objects.filter(owner=user, id=approval_id).delete()
    return bool(deleted)
