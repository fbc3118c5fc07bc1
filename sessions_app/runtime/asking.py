"""The tool side of asking the user: a permission request or a question is a row any worker can answer;
the asking tool creates it (or finds the one it made before a restart) and waits for the reply
(runtime/pending_reply.py). Replying and listing are services (services/permissions, services/questions)."""
from __future__ import annotations

import asyncio
import json
from typing import Callable

from django.db import transaction

from agentserver import ids
from agentserver.loop import free_db
from sessions_app.models import PermissionRequest, Question, Session
from sessions_app.runtime import pending_reply
from sessions_app.runtime.permission_rules import approvals_of, matching_rule, wildcard_match
from sessions_app.runtime.tool_errors import PermissionRejected, QuestionRejected, ToolError
from sessions_app.store.messages import publish_for

REJECTED_TEXT = "The user rejected permission to use this specific tool call."
CORRECTED_TEXT = "The user rejected permission to use this specific tool call with the following feedback: {}"
DENIED_TEXT = ("The user has specified a rule which prevents you from using this specific tool call. "
               "Here are some of the relevant rules {}")
DISMISSED_TEXT = "The user dismissed this question"


# ---- records --------------------------------------------------------------------------------------

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
    request.status = "replied"
    request.reply = reply
    request.message = message
    request.save(update_fields=["status", "reply", "message"])
    publish_for(request.session, "permission.replied",
                {"sessionID": request.session_id, "requestID": request.id, "reply": reply})


def reject_question(question: Question) -> None:
    question.status = "rejected"
    question.save(update_fields=["status"])
    publish_for(question.session, "question.rejected", {"sessionID": question.session_id, "requestID": question.id})


# ---- permissions ----------------------------------------------------------------------------------

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
            resolve_request(row, "reject")


async def ask_permission(*, session: Session, permission: str, patterns: list[str], metadata: dict | None = None,
                         always: list[str] | None = None, tool_ref: dict | None = None, rules: list[dict],
                         abort: asyncio.Event | None = None) -> None:
    """Return when every pattern is allowed (by rule, by a remembered `always`, or by the user's reply).
    A deny rule → ToolError; a rejection → PermissionRejected; `abort` set → the request is rejected."""
    patterns = [str(p) for p in patterns]
    always = [str(p) for p in (always if always is not None else patterns)]
    approved = await free_db(approvals_of)(
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
    request = await free_db(_create_or_reuse)(
        session, permission, patterns, metadata or {}, always, tool_ref)
    await wait_for_reply(request.id, abort=abort)


async def wait_for_reply(request_id: str, *, abort: asyncio.Event | None = None) -> None:
    def settle(row: tuple[str, str | None, str | None]) -> None:
        state, reply, message = row
        if state == "replied" and reply in ("once", "always"):
            _mark_used(request_id)
        _settled(reply, message)

    await pending_reply.wait_for_reply(
        read=lambda: _status(request_id), is_pending=lambda row: row[0] == "pending", settle=settle,
        give_up=lambda: _reject_one(request_id), rejected=lambda: PermissionRejected(REJECTED_TEXT), abort=abort)


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

def _create_question(session: Session, questions: list[dict], tool_ref: dict | None) -> Question:
    if tool_ref and tool_ref.get("callID"):
        for row in Question.objects.filter(session=session).order_by("-id")[:20]:
            if (row.tool or {}).get("callID") == tool_ref["callID"]:
                return row
    with transaction.atomic():
        question = Question.objects.create(id=ids.ascending("que"), session=session, questions=questions,
                                           tool=tool_ref or None)
        publish_for(session, "question.asked", question_wire(question))
    return question


def _state(question_id: str) -> tuple[str, list | None]:
    row = Question.objects.filter(id=question_id).values_list("status", "answers").first()
    return row if row else ("rejected", None)


def _mark_question_used(question_id: str) -> None:
    Question.objects.filter(id=question_id, status="replied").update(status="used")


def _reject_id(question_id: str) -> None:
    with transaction.atomic():
        row = Question.objects.select_for_update().select_related("session").filter(
            id=question_id, status="pending").first()
        if row is not None:
            reject_question(row)


async def ask_question(*, session: Session, questions: list[dict], tool_ref: dict | None = None,
                       abort: asyncio.Event | None = None) -> list[list[str]]:
    """Block until the user answers (→ answers, one list of labels per question) or dismisses
    (→ QuestionRejected, which halts the loop)."""
    question = await free_db(_create_question)(session, questions, tool_ref)

    def settle(row: tuple[str, list | None]) -> list[list[str]]:
        status, answers = row
        if status == "replied":  # read by the waiting tool: a restart must not re-run it
            _mark_question_used(question.id)
        elif status != "used":
            raise QuestionRejected(DISMISSED_TEXT)
        return answers or []

    return await pending_reply.wait_for_reply(
        read=lambda: _state(question.id), is_pending=lambda row: row[0] == "pending", settle=settle,
        give_up=lambda: _reject_id(question.id), rejected=lambda: QuestionRejected(DISMISSED_TEXT), abort=abort)
