"""Permissions, opencode's new system (reference §5.5): rules `{permission, pattern, action}` from config,
agent and session; the last matching rule wins, no match asks. An `ask` is a PermissionRequest row that any
worker can answer: the waiting tool polls the row, so a reply reaching another worker still unblocks it,
and a pending request survives a restart of the worker that asked."""
from __future__ import annotations

import asyncio
import json
import os
import re
from functools import lru_cache
from typing import Callable

from asgiref.sync import sync_to_async
from django.db import transaction

from agentserver import ids
from agentserver.errors import BadRequest, NotFound
from sessions_app.models import PermissionApproval, PermissionRequest, Session
from sessions_app.runtime.tools.base import PermissionRejected, ToolError
from sessions_app.services.messages import publish_for

ACTIONS = ("allow", "ask", "deny")
REPLIES = ("once", "always", "reject")
POLL_SECONDS = 0.1

REJECTED_TEXT = "The user rejected permission to use this specific tool call."
CORRECTED_TEXT = "The user rejected permission to use this specific tool call with the following feedback: {}"
DENIED_TEXT = ("The user has specified a rule which prevents you from using this specific tool call. "
               "Here are some of the relevant rules {}")


# ---- rules ----------------------------------------------------------------------------------------

@lru_cache(maxsize=2048)
def _pattern_regex(pattern: str) -> re.Pattern:
    escaped = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    # "git status *" also matches the bare "git status" (opencode's wildcard rule).
    if escaped.endswith(r"\ .*"):
        escaped = escaped[: -len(r"\ .*")] + r"(\ .*)?"
    return re.compile("^" + escaped + "$", re.DOTALL)


def wildcard_match(value: str, pattern: str) -> bool:
    return bool(_pattern_regex(pattern.replace("\\", "/")).match(value.replace("\\", "/")))


def _expand(pattern: str) -> str:
    home = os.path.expanduser("~")
    if pattern == "~" or pattern == "$HOME":
        return home
    if pattern.startswith("~/"):
        return home + pattern[1:]
    if pattern.startswith("$HOME/"):
        return home + pattern[5:]
    return pattern


def rules_from_config(permission) -> list[dict]:
    """`permission` config → rules: "ask" → everything; {"bash": "allow"} → pattern *; {"bash": {"git *":
    "allow"}} → one rule per pattern. Unknown actions are skipped rather than guessed."""
    if isinstance(permission, str):
        return [{"permission": "*", "pattern": "*", "action": permission}] if permission in ACTIONS else []
    if not isinstance(permission, dict):
        return []
    rules: list[dict] = []
    for key, value in permission.items():
        if isinstance(value, str):
            if value in ACTIONS:
                rules.append({"permission": key, "pattern": "*", "action": value})
        elif isinstance(value, dict):
            for pattern, action in value.items():
                if isinstance(pattern, str) and action in ACTIONS:
                    rules.append({"permission": key, "pattern": _expand(pattern), "action": action})
    return rules


def clean_rules(rules) -> list[dict]:
    """Keep only well-formed rules (sessions store client-supplied lists)."""
    out = []
    for rule in rules or []:
        if (isinstance(rule, dict) and isinstance(rule.get("permission"), str)
                and isinstance(rule.get("pattern"), str) and rule.get("action") in ACTIONS):
            out.append({"permission": rule["permission"], "pattern": rule["pattern"], "action": rule["action"]})
    return out


def matching_rule(rules: list[dict], permission: str, pattern: str) -> dict | None:
    for rule in reversed(rules):
        if wildcard_match(permission, rule["permission"]) and wildcard_match(pattern, rule["pattern"]):
            return rule
    return None


def evaluate(rules: list[dict], permission: str, pattern: str) -> str:
    rule = matching_rule(rules, permission, pattern)
    return rule["action"] if rule else "ask"


EDIT_TOOLS = ("edit", "write", "patch", "multiedit", "apply_patch")


def disabled_tools(tool_ids: list[str], rules: list[dict]) -> set[str]:
    """Tools whose permission is denied outright (last rule for it is `deny` on `*`): not offered to the model."""
    out = set()
    for tool_id in tool_ids:
        permission = "edit" if tool_id in EDIT_TOOLS else tool_id
        rule = next((r for r in reversed(rules) if wildcard_match(permission, r["permission"])), None)
        if rule and rule["pattern"] == "*" and rule["action"] == "deny":
            out.add(tool_id)
    return out


def approvals_of(*, owner_id: int, project_id: str) -> list[dict]:
    return [{"permission": p, "pattern": pat, "action": "allow"}
            for p, pat in PermissionApproval.objects.filter(owner_id=owner_id, project_id=project_id)
            .order_by("id").values_list("permission", "pattern")]


# ---- records --------------------------------------------------------------------------------------

def request_wire(request: PermissionRequest) -> dict:
    out = {"id": request.id, "sessionID": request.session_id, "permission": request.permission,
           "patterns": request.patterns, "metadata": request.metadata, "always": request.always}
    if request.tool:
        out["tool"] = request.tool
    return out


def permission_list(*, user, project_id: str | None = None) -> list[dict]:
    rows = PermissionRequest.objects.filter(session__owner=user, status="pending").order_by("id")
    if project_id is not None:
        rows = rows.filter(session__project_id=project_id)
    return [request_wire(r) for r in rows]


def _pending_for(user, request_id: str) -> PermissionRequest:
    request = (PermissionRequest.objects.select_for_update().select_related("session")
               .filter(id=request_id, session__owner=user, status="pending").first())
    if request is None:
        raise NotFound(f"Permission request not found: {request_id}", requestID=request_id)
    return request


def _resolve(request: PermissionRequest, reply: str, message: str | None = None) -> None:
    request.status = "replied"
    request.reply = reply
    request.message = message
    request.save(update_fields=["status", "reply", "message"])
    publish_for(request.session, "permission.replied",
                {"sessionID": request.session_id, "requestID": request.id, "reply": reply})


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
        _resolve(request, reply, message)
        others = list(PermissionRequest.objects.select_for_update().select_related("session")
                      .filter(session=session, status="pending").exclude(id=request.id).order_by("id"))
        if reply == "reject":
            for other in others:
                _resolve(other, "reject")
        elif reply == "always":
            for pattern in request.always or []:
                PermissionApproval.objects.get_or_create(owner_id=session.owner_id, project_id=session.project_id,
                                                         permission=request.permission, pattern=pattern)
            approved = approvals_of(owner_id=session.owner_id, project_id=session.project_id)
            for other in others:
                if all(evaluate(approved, other.permission, p) == "allow" for p in other.patterns or []):
                    _resolve(other, "always")
    if reply in ("once", "always") and request.tool:
        from sessions_app.runtime.resume import wake_if_orphaned

        wake_if_orphaned(request.session_id)  # a call interrupted by a restart resumes (runtime/resume.py)
    return True


def reject_pending(*, session: Session) -> int:
    """On abort: every pending request of the session is rejected (its waiting tool raises)."""
    with transaction.atomic():
        rows = list(PermissionRequest.objects.select_for_update().select_related("session")
                    .filter(session=session, status="pending").order_by("id"))
        for row in rows:
            _resolve(row, "reject")
    return len(rows)


# ---- asking ---------------------------------------------------------------------------------------

def _create_or_reuse(session: Session, permission: str, patterns: list[str], metadata: dict, always: list[str],
                     tool_ref: dict | None) -> PermissionRequest:
    """One request per (tool call, permission, patterns): a tool call re-run after a worker restart finds
    the request it asked before (answered or still pending) instead of asking twice."""
    if tool_ref and tool_ref.get("callID"):
        for row in PermissionRequest.objects.filter(session=session, permission=permission).order_by("-id")[:50]:
            if (row.tool or {}).get("callID") == tool_ref["callID"] and row.patterns == patterns:
                return row
    with transaction.atomic():
        request = PermissionRequest.objects.create(
            id=ids.ascending("per"), session=session, permission=permission, patterns=patterns,
            metadata=metadata, always=always, tool=tool_ref or None)
        publish_for(session, "permission.asked", request_wire(request))
    return request


def _status(request_id: str) -> tuple[str, str | None, str | None]:
    row = PermissionRequest.objects.filter(id=request_id).values_list("status", "reply", "message").first()
    return row if row else ("replied", "reject", None)


def _mark_used(request_id: str) -> None:
    """The waiting tool has read the allowing answer and goes on: a restart must not re-run it."""
    PermissionRequest.objects.filter(id=request_id, status="replied").update(status="used")


def _settled(reply: str | None, message: str | None) -> None:
    if reply in ("once", "always"):
        return
    if message:
        raise PermissionRejected(CORRECTED_TEXT.format(message), feedback=message)
    raise PermissionRejected(REJECTED_TEXT)


def _reject_one(request_id: str) -> None:
    with transaction.atomic():
        row = (PermissionRequest.objects.select_for_update().select_related("session")
               .filter(id=request_id, status="pending").first())
        if row is not None:
            _resolve(row, "reject")


async def ask_permission(*, session: Session, permission: str, patterns: list[str], metadata: dict | None = None,
                         always: list[str] | None = None, tool_ref: dict | None = None, rules: list[dict],
                         abort: asyncio.Event | None = None) -> None:
    """Return when every pattern is allowed (by rule, by a remembered `always`, or by the user's reply).
    A deny rule → ToolError; a rejection → PermissionRejected; `abort` set → the request is rejected."""
    patterns = [str(p) for p in patterns]
    always = [str(p) for p in (always if always is not None else patterns)]
    approved = await sync_to_async(approvals_of, thread_sensitive=False)(
        owner_id=session.owner_id, project_id=session.project_id)
    needs_ask = False
    for pattern in patterns:
        rule = matching_rule(rules + approved, permission, pattern)
        action = rule["action"] if rule else "ask"
        if action == "deny":
            relevant = [r for r in rules if wildcard_match(permission, r["permission"])]
            raise ToolError(DENIED_TEXT.format(json.dumps(relevant, separators=(",", ":"))))
        if action == "ask":
            needs_ask = True
    if not needs_ask:
        return
    request = await sync_to_async(_create_or_reuse, thread_sensitive=False)(
        session, permission, patterns, metadata or {}, always, tool_ref)
    await wait_for_reply(request.id, abort=abort)


async def wait_for_reply(request_id: str, *, abort: asyncio.Event | None = None) -> None:
    status = sync_to_async(_status, thread_sensitive=False)
    try:
        while True:
            state, reply, message = await status(request_id)
            if state != "pending":
                if state == "replied" and reply in ("once", "always"):
                    await sync_to_async(_mark_used, thread_sensitive=False)(request_id)
                return _settled(reply, message)
            if abort is not None and abort.is_set():
                await sync_to_async(_reject_one, thread_sensitive=False)(request_id)
                raise PermissionRejected(REJECTED_TEXT)
            if abort is not None:
                try:
                    await asyncio.wait_for(abort.wait(), POLL_SECONDS)
                except asyncio.TimeoutError:
                    pass
            else:
                await asyncio.sleep(POLL_SECONDS)
    except asyncio.CancelledError:
        # The runner was cancelled (abort or shutdown); the row stays for the next run or reject_pending().
        raise


def asker(*, session: Session, rules: list[dict], message_id: str, call_id: str,
          abort: asyncio.Event | None = None) -> Callable:
    """The `ctx.ask` of one tool call: `await ask(permission, patterns, metadata=..., always=...)`."""
    tool_ref = {"messageID": message_id, "callID": call_id}

    async def ask(permission: str, patterns: list[str], *, metadata: dict | None = None,
                  always: list[str] | None = None) -> None:
        await ask_permission(session=session, permission=permission, patterns=patterns, metadata=metadata,
                             always=always, tool_ref=tool_ref, rules=rules, abort=abort)

    return ask
