"""The assistant message a step writes: it owns the message's info and its parts, and is the only code that
stores them while the step runs, through the store (store/messages.py, store/sessions.py), which announces
each write."""
from __future__ import annotations

from django.db import transaction

from agentserver.workers.loop import db
from audit_app.actors import Actor
from audit_app.log import record
from sessions_app.models import Session
from sessions_app.runtime import parts
from sessions_app.store import messages as message_store
from sessions_app.store import sessions as session_store
from usage_app.calls import ModelCall
from usage_app.services import do_record_call


class AssistantMessage:
    def __init__(self, session: Session, info: dict):
        self.session = session
        self.info = info                      # the wire info, shared with the turn that opened the message
        self.parts: dict[str, dict] = {}      # part id → data, everything written so far, in order
        self.fenced = False                   # the runner lost the session's lease: store nothing more

    def fence(self) -> None:
        """From now on nothing is stored: another runner holds the session and goes on with this step."""
        self.fenced = True

    @property
    def id(self) -> str:
        return self.info["id"]

    def new_part(self, kind: str, **fields) -> dict:
        return parts.new_part(self.session.id, self.id, kind, **fields)

    async def save_part(self, part: dict, *, audit: dict | None = None) -> None:
        """`audit`: the fields of the audit record written with it (a settled tool call's), in one transaction."""
        new = part["id"] not in self.parts
        self.parts[part["id"]] = part
        if self.fenced:
            return
        if audit is None:
            await db(message_store.part_save)(session=self.session, part=part, new=new)
        else:
            await db(_store_with_record)(self.session, part, new, audit)

    async def remove_part(self, part: dict) -> None:
        self.parts.pop(part["id"], None)
        if self.fenced:
            return
        await db(message_store.part_remove)(session=self.session, message_id=self.id, part_id=part["id"])

    async def checkpoint_part(self, part: dict) -> None:
        """A streaming part's text so far, stored without an event (its deltas went out already)."""
        if self.fenced:
            return
        await db(message_store.part_checkpoint)(session=self.session, part=dict(part))

    def fail(self, error: dict) -> None:
        self.info["error"] = error

    async def finish_step(self, *, reason: str, cost: float, tokens: dict, call: ModelCall | None = None) -> None:
        """The model call ended: its finish reason and usage on the message, the session's totals and the
        call's usage record (`call`)."""
        self.info["finish"] = reason
        self.info["tokens"] = tokens
        self.info["cost"] = float(self.info.get("cost") or 0) + cost
        if self.fenced:
            # The message is the next runner's now, but this call was made and paid for here.
            await db(do_record_call)(call=call)
            return
        await db(_store_step_end)(self.session, dict(self.info), cost, tokens, call)


def _store_with_record(session: Session, part: dict, new: bool, audit: dict) -> None:
    with transaction.atomic():
        message_store.part_save(session=session, part=part, new=new)
        record(actor=Actor.agent(session_id=session.id, person_id=session.owner_id), session_id=session.id, **audit)


def _store_step_end(session: Session, info: dict, cost: float, tokens: dict, call: ModelCall | None) -> None:
    """The message, the session's totals and the usage record in one transaction: a crash leaves the call
    counted with its step or not at all."""
    with transaction.atomic():
        message_store.message_save(session=session, info=info)
        session_store.session_add_usage(session_id=session.id, cost=cost, tokens=tokens)
        do_record_call(call=call)
