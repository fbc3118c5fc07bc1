"""Permission requests, the user's side (reference §5.5): list the pending ones, reply (remembering `always`
approvals for the project), reject them all on abort. The rules are runtime/permission_rules.py; a tool
asks and waits through runtime/asking.py (both re-exported here for callers of this service)."""
from __future__ import annotations

import json

from django.db import transaction

from agentserver import ids
from agentserver.errors import BadRequest, Conflict, NotFound
from agentserver.numerals import decimal
from sessions_app.models import PermissionApproval, PermissionRequest, Session
from sessions_app.store.messages import publish_for
from sessions_app.runtime.asking import (CORRECTED_TEXT, DENIED_TEXT, REJECTED_TEXT, ask_permission,  # noqa: F401
                                         asker, request_wire, resolve_request, wait_for_reply)
from sessions_app.runtime.permission_rules import (ACTIONS, EDIT_TOOLS, approvals_of, clean_rules,  # noqa: F401
                                                   disabled_tools, evaluate, matching_rule, rules_from_config,
                                                   wildcard_match)

REPLIES = ("once", "always", "reject")


def permission_list(*, user, project_id: str | None = None, session: Session | None = None) -> list[dict]:
    rows = PermissionRequest.objects.filter(session__owner=user, status="pending").order_by("id")
    if project_id is not None:
        rows = rows.filter(session__project_id=project_id)
    if session is not None:
        rows = rows.filter(session=session)
    return [request_wire(r) for r in rows]


def permission_get(*, session: Session, request_id: str) -> dict:
    """A pending request of the caller's session (v2 session.permission.get)."""
    row = PermissionRequest.objects.filter(id=request_id, session=session, status="pending").first()
    if row is None:
        raise NotFound(f"Permission request not found: {request_id}", requestID=request_id)
    return request_wire(row)


def permission_create(*, session: Session, action: str, resources: list[str], save: list[str] | None = None,
                      metadata: dict | None = None, source: dict | None = None, agent: str | None = None,
                      request_id: str | None = None) -> dict:
    """v2 session.permission.create: evaluate `action` on each resource against the session's rules (its
    agent's, its own, and the project's saved approvals). `deny` or `allow` settle it at once; otherwise a
    pending request is created (permission.asked) for the user to reply to: {id, effect}."""
    from sessions_app.runtime.agents import default_agent_name, session_ruleset
    from sessions_app.runtime.turn_setup import load_config, session_context

    config = load_config(session_context(session))
    rules = session_ruleset(config, agent or session.agent or default_agent_name(config), session.permission)
    rules = rules + approvals_of(owner_id=session.owner_id, project_id=session.project_id)
    effects = [evaluate(rules, action, resource) for resource in resources]
    request_id = request_id or ids.ascending("per")
    if "deny" in effects:
        return {"id": request_id, "effect": "deny"}
    if all(effect == "allow" for effect in effects):
        return {"id": request_id, "effect": "allow"}
    if PermissionRequest.objects.filter(id=request_id).exists():
        raise Conflict(f"Permission request already exists: {request_id}", requestID=request_id)
    tool = {"messageID": source["messageID"], "callID": source["callID"]} if source else None
    with transaction.atomic():
        row = PermissionRequest.objects.create(
            id=request_id, session=session, permission=action, patterns=list(resources), metadata=metadata or {},
            always=list(save if save is not None else resources), tool=tool)
        publish_for(session, "permission.asked", request_wire(row))
    return {"id": row.id, "effect": "ask"}


def saved_wire(row: PermissionApproval) -> dict:
    return {"id": str(row.id), "projectID": row.project_id, "action": row.permission, "resource": row.pattern}


def saved_list(*, user, project_id: str | None = None) -> list[dict]:
    """The caller's remembered `always` approvals (v2 permission.saved.list), optionally of one project."""
    rows = PermissionApproval.objects.filter(owner=user).order_by("id")
    if project_id is not None:
        rows = rows.filter(project_id=project_id)
    return [saved_wire(row) for row in rows]


def saved_remove(*, user, approval_id: str) -> None:
    """Forget one remembered approval (v2 permission.saved.remove): its action asks again."""
    deleted, number = 0, decimal(approval_id)
    if number is not None:
        deleted, _ = PermissionApproval.objects.filter(owner=user, id=number).delete()
    if not deleted:
        raise NotFound(f"Saved permission not found: {approval_id}", id=approval_id)


def _pending_for(user, request_id: str) -> PermissionRequest:
    request = (PermissionRequest.objects.select_for_update().select_related("session")
               .filter(id=request_id, session__owner=user, status="pending").first())
    if request is None:
        raise NotFound(f"Permission request not found: {request_id}", requestID=request_id)
    return request


def permission_reply(*, user, request_id: str, reply: str, message: str | None = None,
                     session_id: str | None = None) -> bool:
    """Answer a pending request. `always` remembers the request's `always` patterns for the project and
    settles the session's other requests they now cover; `reject` rejects the session's other requests too."""
    if reply not in REPLIES:
        raise BadRequest(f'Expected "once" | "always" | "reject", got {json.dumps(reply)}', kind="Body")
    with transaction.atomic():
        request = _pending_for(user, request_id)
        if session_id is not None and request.session_id != session_id:
            raise NotFound(f"Permission request not found: {request_id}", requestID=request_id)
        session = request.session
        resolve_request(request, reply, message)
        others = list(PermissionRequest.objects.select_for_update().select_related("session")
                      .filter(session=session, status="pending").exclude(id=request.id).order_by("id"))
        if reply == "reject":
            for other in others:
                resolve_request(other, "reject")
        elif reply == "always":
            for pattern in request.always or []:
                PermissionApproval.objects.get_or_create(owner_id=session.owner_id, project_id=session.project_id,
                                                         permission=request.permission, pattern=pattern)
            approved = approvals_of(owner_id=session.owner_id, project_id=session.project_id)
            for other in others:
                if all(evaluate(approved, other.permission, p) == "allow" for p in other.patterns or []):
                    resolve_request(other, "always")
    if reply in ("once", "always") and request.tool:
        from sessions_app.runtime.supervisor import wake_if_orphaned

        wake_if_orphaned(request.session_id)  # a call interrupted by a restart resumes (runtime/resume.py)
    return True


def reject_pending(*, session: Session) -> int:
    """On abort: every pending request of the session is rejected (its waiting tool raises)."""
    with transaction.atomic():
        rows = list(PermissionRequest.objects.select_for_update().select_related("session")
                    .filter(session=session, status="pending").order_by("id"))
        for row in rows:
            resolve_request(row, "reject")
    return len(rows)
