"""Permission requests, the user's side (reference §5.5): how a reply is checked and what it does
(remembering `always` approvals for the project), asking one through the API, and the remembered approvals.
Listing, replying and rejecting on abort are services/pending.py's for both kinds. The rules are
runtime/permission_rules.py; a tool asks and waits through runtime/asking.py (both re-exported here for
callers of this service)."""
from __future__ import annotations

import json

from agentserver import ids
from agentserver.errors import BadRequest, Conflict, NotFound
from agentserver.numerals import decimal
from policy_app.rules import stricter
from policy_app.selectors import policy_for
from sessions_app.models import PermissionApproval, PermissionRequest, Session
from sessions_app.runtime import pending_requests
from sessions_app.runtime.asking import (CORRECTED_TEXT, DENIED_TEXT, PERMISSION, REJECTED_TEXT,  # noqa: F401
                                         ask_permission, asker, request_wire, resolve_request, wait_for_reply)
from sessions_app.runtime.permission_rules import (ACTIONS, EDIT_TOOLS, approvals_of, clean_rules,  # noqa: F401
                                                   disabled_tools, evaluate, matching_rule, rules_from_config,
                                                   wildcard_match)
from sessions_app.services import pending
from sessions_app.services.pending import Answering
from sessions_app.store import approvals
from sessions_app.store import pending as request_rows

REPLIES = ("once", "always", "reject")


def _check(answer: dict) -> None:
    if answer["reply"] not in REPLIES:
        raise BadRequest(f'Expected "once" | "always" | "reject", got {json.dumps(answer["reply"])}', kind="Body")


def _apply(request: PermissionRequest, answer: dict) -> bool:
    """`always` remembers the request's `always` patterns for the project and settles the session's other
    requests they now cover; `reject` rejects the session's other requests too."""
    reply, session = answer["reply"], request.session
    resolve_request(request, reply, answer.get("message") or None)
    others = pending_requests.locked_pending(PERMISSION, session=session)  # the request is answered by now
    if reply == "reject":
        for other in others:
            resolve_request(other, "reject")
    elif reply == "always":
        for pattern in request.always or []:
            approvals.remember(owner_id=session.owner_id, project_id=session.project_id,
                               permission=request.permission, pattern=pattern)
        approved = approvals_of(owner_id=session.owner_id, project_id=session.project_id)
        for other in others:
            if all(evaluate(approved, other.permission, p) == "allow" for p in other.patterns or []):
                resolve_request(other, "always")
    return reply in ("once", "always")


ANSWERING = Answering(kind=PERMISSION, noun="Permission request", check=_check, apply=_apply)


def permission_list(*, user, project_id: str | None = None, session: Session | None = None) -> list[dict]:
    return pending.request_list(ANSWERING, user=user, project_id=project_id, session=session)


def permission_reply(*, user, request_id: str, reply: str, message: str | None = None,
                     session_id: str | None = None) -> bool:
    return pending.request_reply(ANSWERING, user=user, request_id=request_id, session_id=session_id,
                                 answer={"reply": reply, "message": message})


def reject_pending(*, session: Session) -> int:
    return pending.reject_all(ANSWERING, session=session)


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
    ceiling = policy_for(session.owner).ceiling(action)
    effects = [stricter(evaluate(rules, action, resource), ceiling.value if ceiling else None)
               for resource in resources]
    request_id = request_id or ids.ascending("per")
    if "deny" in effects:
        return {"id": request_id, "effect": "deny"}
    if all(effect == "allow" for effect in effects):
        return {"id": request_id, "effect": "allow"}
    if request_rows.exists(PermissionRequest, request_id):
        raise Conflict(f"Permission request already exists: {request_id}", requestID=request_id)
    tool = {"messageID": source["messageID"], "callID": source["callID"]} if source else None
    row = pending_requests.create(PERMISSION, session, tool_ref=tool, request_id=request_id, permission=action,
                                  patterns=list(resources), metadata=metadata or {},
                                  always=list(save if save is not None else resources))
    return {"id": row.id, "effect": "ask"}


def saved_wire(row: PermissionApproval) -> dict:
    return {"id": str(row.id), "projectID": row.project_id, "action": row.permission, "resource": row.pattern}


def saved_list(*, user, project_id: str | None = None) -> list[dict]:
    """The caller's remembered `always` approvals (v2 permission.saved.list), optionally of one project."""
    return [saved_wire(row) for row in approvals.approvals_of_owner(user=user, project_id=project_id)]


def saved_remove(*, user, approval_id: str) -> None:
    """Forget one remembered approval (v2 permission.saved.remove): its action asks again."""
    number = decimal(approval_id)
    if number is None or not approvals.forget(user=user, approval_id=number):
        raise NotFound(f"Saved permission not found: {approval_id}", id=approval_id)
