"""pty.connectToken: a ticket for `/pty/{id}/connect?ticket=…`, bound to the user, the PTY and the credential
that asked for it, valid for TICKET_SECONDS and for one connect. Any worker can redeem it (it lives in the
database, hashed). The socket it opens is held under that credential: revoking the token or signing the
browser out closes it."""
from __future__ import annotations

import hashlib
import re
import secrets
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from auth_app.authentication import user_credential_id
from pty_app import selectors, store
from pty_app.models import PtyTicket

TICKET_SECONDS = 60
_CONNECT_PATH = re.compile(r"^/(?:api/)?pty/([^/]+)/connect/?$")


def _hash(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


def ticket_create(*, user, pty_id: str, credential: int | str | None) -> dict:
    selectors.pty_get(user=user, pty_id=pty_id)
    ticket = "ptk_" + secrets.token_urlsafe(32)
    store.ticket_made(key_hash=_hash(ticket), owner=user, pty_id=pty_id,
                      credential="" if credential is None else str(credential), seconds=TICKET_SECONDS)
    return {"ticket": ticket, "expires_in": TICKET_SECONDS}


def ticket_redeem(*, ticket: str, pty_id: str):
    """(the ticket's user, the credential it was asked with) when it is valid for this PTY, else None. Either
    way the ticket is used up."""
    row = store.ticket_used_up(_hash(ticket))
    if row is None:
        return None
    if row.pty_id != pty_id or row.expired or not row.owner.is_active:
        return None
    return row.owner, _credential_of(row)


def _credential_of(row: PtyTicket) -> int | str:
    if not row.credential:
        return user_credential_id(row.owner)
    return int(row.credential) if row.credential.isdigit() else row.credential


async def websocket_ticket_user(scope):
    """For the WebSocket auth middleware: (user, credential id) a `?ticket=` on a PTY connect URL stands for,
    or None."""
    match = _CONNECT_PATH.match(scope.get("path", ""))
    tickets = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("ticket")
    if match is None or not tickets or not tickets[0] or len(tickets[0]) > 200:
        return None
    return await database_sync_to_async(ticket_redeem)(ticket=tickets[0], pty_id=match.group(1))
