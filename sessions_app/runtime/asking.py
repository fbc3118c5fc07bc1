"""The tool side of asking the user, the two kinds of pending request (runtime/pending_requests.py): a
permission request, which the session's rules may settle without asking, and a question. The asking tool
creates its request (or finds the one it made before a restart) and waits for the reply. Replying and
listing are services (services/pending.py)."""
from __future__ import annotations

import asyncio
import json
from typing import Callable

from agentserver.workers.loop import free_db
from policy_app.rules import Decided, stricter
from policy_app.selectors import policy_for_user_id
from sessions_app.models import PermissionRequest, Question, Session
from sessions_app.runtime import pending_requests
from sessions_app.runtime.pending_requests import RequestKind
from sessions_app.runtime.permission_rules import (
    approvals_of,
    matching_rule,
    wildcard_match,
)
from sessions_app.runtime.tool_errors import (
    PermissionRejected,
    QuestionRejected,
    ToolError,
)

REJECTED_TEXT = "The user rejected permission to use this specific tool call."
CORRECTED_TEXT = "The user rejected permission to use this specific tool call with the following feedback: {}"
DENIED_TEXT = ("The user has specified a rule which prevents you from using this specific tool call. "
               "Here are some of the relevant rules {}")
DISMISSED_TEXT = "The user dismissed this question"
POLICY_DENIED_TEXT = "The {policy} of the user's organization does not allow the {permission} permission."


# ---- the two kinds --------------------------------------------------------------------------------

def request_wire(request: PermissionRequest) -> dict:
    out = {"id": request.id, "sessionID": request.session_id, "permission": request.permission,
           "patterns": request.patterns, "metadata": request.metadata, "always": request.always}
    if request.tool:
        out["tool"] = request.tool
    return out


def question_wire(question: Question) -> dict:
    out = {"id": question.id, "sessionID": question.session_id, "questions": question.questions}
    if question.tool:
        out["tool"] = question.tool
    return out


def resolve_request(request: PermissionRequest, reply: str, message: str | None = None) -> None:
    """A permission is answered `once`, `always` or `reject`, all announced as permission.replied."""
    pending_requests.settle(PERMISSION, request, status="replied", happened="replied",
                            stored={"reply": reply, "message": message}, announced={"reply": reply})


def reject_question(question: Question) -> None:
    pending_requests.settle(QUESTION, question, status="rejected", happened="rejected")


PERMISSION = RequestKind(name="permission", prefix="per", model=PermissionRequest, wire=request_wire,
                         reject=lambda request: resolve_request(request, "reject"))
QUESTION = RequestKind(name="question", prefix="que", model=Question, wire=question_wire, reject=reject_question)


# ---- permissions ----------------------------------------------------------------------------------

def _create_or_reuse(session: Session, permission: str, patterns: list[str], metadata: dict, always: list[str],
                     tool_ref: dict | None) -> PermissionRequest:
    """One request per (tool call, permission, patterns)."""
    return (pending_requests.asked_before(PERMISSION, session, tool_ref, look_back=50, permission=permission,
                                          same=lambda row: row.patterns == patterns)
            or pending_requests.create(PERMISSION, session, tool_ref=tool_ref, permission=permission,
                                       patterns=patterns, metadata=metadata, always=always))


def _settled(row: tuple[str, str | None, str | None]) -> None:
    _status, reply, message = row
    if reply in ("once", "always"):
        return
    if message:
        raise PermissionRejected(CORRECTED_TEXT.format(message), feedback=message)
    raise PermissionRejected(REJECTED_TEXT)


def _approvals_and_ceiling(session: Session, permission: str) -> tuple[list[dict], Decided | None]:
    """(Synchronous, one call.) The owner's remembered approvals in the project, and the organization's
    ceiling on `permission`, read fresh at each call: it comes after every rule and approval."""
    approved = approvals_of(owner_id=session.owner_id, project_id=session.project_id)
    return approved, policy_for_user_id(session.owner_id, fresh=True).ceiling(permission)


async def ask_permission(*, session: Session, permission: str, patterns: list[str], metadata: dict | None = None,
                         always: list[str] | None = None, tool_ref: dict | None = None, rules: list[dict],
                         abort: asyncio.Event | None = None) -> None:
    """Return when every pattern is allowed (by rule, by a remembered `always`, or by the user's reply).
    A deny rule → ToolError; a rejection → PermissionRejected; `abort` set → the request is rejected."""
    patterns = [str(p) for p in patterns]
    always = [str(p) for p in (always if always is not None else patterns)]
    approved, ceiling = await free_db(_approvals_and_ceiling)(session, permission)
    needs_ask = False
    for pattern in patterns:
        rule = matching_rule(rules + approved, permission, pattern)
        action = rule["action"] if rule else "ask"
        if ceiling is not None and ceiling.value == "deny":
            raise ToolError(POLICY_DENIED_TEXT.format(policy=ceiling.by, permission=permission))
        if ceiling is not None:
            action = stricter(action, ceiling.value)
        if action == "deny":
            relevant = [r for r in rules if wildcard_match(permission, r["permission"])]
            raise ToolError(DENIED_TEXT.format(json.dumps(relevant, separators=(",", ":"))))
        if action == "ask":
            needs_ask = True
    if not needs_ask:
        return
    request = await free_db(_create_or_reuse)(
        session, permission, patterns, metadata or {}, always, tool_ref)
    await wait_for_reply(request.id, abort=abort)


async def wait_for_reply(request_id: str, *, abort: asyncio.Event | None = None) -> None:
    await pending_requests.wait_for_answer(
        PERMISSION, request_id, answer=("reply", "message"), gone=("replied", "reject", None),
        settle_answer=_settled, rejected=lambda: PermissionRejected(REJECTED_TEXT), abort=abort)


def asker(*, session: Session, rules: list[dict], message_id: str, call_id: str,
          abort: asyncio.Event | None = None) -> Callable:
    """The `ctx.ask` of one tool call: `await ask(permission, patterns, metadata=..., always=...)`."""
    tool_ref = {"messageID": message_id, "callID": call_id}

    async def ask(permission: str, patterns: list[str], *, metadata: dict | None = None,
                  always: list[str] | None = None) -> None:
        await ask_permission(session=session, permission=permission, patterns=patterns, metadata=metadata,
                             always=always, tool_ref=tool_ref, rules=rules, abort=abort)

    return ask


# ---- questions ------------------------------------------------------------------------------------

def _answers(row: tuple[str, list | None]) -> list[list[str]]:
    status, answers = row
    if status not in ("replied", "used"):
        raise QuestionRejected(DISMISSED_TEXT)
    return answers or []


def _create_question(session: Session, questions: list[dict], tool_ref: dict | None) -> Question:
    return (pending_requests.asked_before(QUESTION, session, tool_ref, look_back=20)
            or pending_requests.create(QUESTION, session, tool_ref=tool_ref, questions=questions))


async def ask_question(*, session: Session, questions: list[dict], tool_ref: dict | None = None,
                       abort: asyncio.Event | None = None) -> list[list[str]]:
    """Block until the user answers (→ answers, one list of labels per question) or dismisses
    (→ QuestionRejected, which halts the loop)."""
    question = await free_db(_create_question)(session, questions, tool_ref)
    return await pending_requests.wait_for_answer(
        QUESTION, question.id, answer=("answers",), gone=("rejected", None), settle_answer=_answers,
        rejected=lambda: QuestionRejected(DISMISSED_TEXT), abort=abort)
