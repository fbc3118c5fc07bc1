"""The one way into the audit log: `record(...)`, called inside the transaction of the change it records, so
a change cannot commit without its record (nor a record without its change).

Each committed record is also written as one JSON line to the `agentserver.audit` logger, for a SIEM
(docs/audit.md; AGENTSERVER_AUDIT_LOG_FILE points a handler at a file)."""
from __future__ import annotations

import logging

import orjson
from django.db import connection, transaction

from audit_app import store
from audit_app.actors import Actor, current
from audit_app.models import AuditRecord
from audit_app.redaction import redact, text

SUCCESS, FAILURE, REFUSED = "success", "failure", "refused"
OUTCOMES = (SUCCESS, FAILURE, REFUSED)
siem = logging.getLogger("agentserver.audit")


def record(*, action: str, actor: Actor | None = None, object_type: str = "", object_id: str | int = "",
           outcome: str = SUCCESS, details: dict | None = None, session_id: str = "") -> AuditRecord:
    """Append a record of `action` on (object_type, object_id). `actor`: who did it (default: this request's
    actor, else the server). `details` are redacted (audit_app/redaction.py) before they are stored.
    Inside the caller's transaction when there is one; otherwise in a transaction of its own."""
    actor = actor or current() or Actor.system()
    values = {
        "actor_person": actor.person_id, "actor_name": text(actor.name, 150), "actor_token": actor.token_id,
        "actor_address": actor.address[:64], "actor_user_agent": text(actor.user_agent, 300),
        "actor_session": actor.session_id[:64], "action": action[:64], "object_type": object_type[:64],
        "object_id": text(str(object_id), 200), "outcome": outcome, "session": (session_id or actor.session_id)[:64],
        "details": orjson.dumps(redact(details or {}), option=orjson.OPT_SORT_KEYS).decode(),
    }
    if connection.in_atomic_block:
        saved = store.append(values)
    else:
        with transaction.atomic():
            saved = store.append(values)
    if siem.isEnabledFor(logging.INFO):
        transaction.on_commit(lambda: siem.info(as_line(saved)))
    return saved


def as_json(row: AuditRecord) -> dict:
    """A record as the API, the export and the SIEM line show it."""
    return {
        "id": row.id, "time": row.time.isoformat(), "action": row.action,
        "actor": {"person": row.actor_person, "name": row.actor_name, "token": row.actor_token,
                  "address": row.actor_address, "userAgent": row.actor_user_agent,
                  "session": row.actor_session or None,
                  "description": Actor(person_id=row.actor_person, name=row.actor_name, token_id=row.actor_token,
                                       session_id=row.actor_session).describe()},
        "object": {"type": row.object_type, "id": row.object_id}, "outcome": row.outcome,
        "session": row.session or None, "details": orjson.loads(row.details), "hash": row.hash,
        "prevHash": row.prev_hash,
    }


def as_line(row: AuditRecord) -> str:
    return orjson.dumps(as_json(row)).decode()
