"""A token's first use from each address is an audit record. Cheap on the warm path: the pairs this process
has seen are kept in memory (bounded), so a request from a known address costs a set lookup; only a new
pair reads, and at most once writes, the TokenAddress table."""
from __future__ import annotations

import threading

from django.db import IntegrityError, transaction

from audit_app.actors import Actor
from audit_app.log import record
from auth_app import store
from auth_app.models import ApiToken

_SEEN_MAX = 50_000
_seen: set[tuple[str, str]] = set()
_seen_lock = threading.Lock()


def note_token_use(*, token: ApiToken, actor: Actor) -> None:
    pair = (token.digest, actor.address)  # the digest, not the id: ids come back after a database is emptied
    if not actor.address or pair in _seen:
        return
    if not store.address_known(token_id=token.pk, address=actor.address):
        try:
            with transaction.atomic():
                store.address_noted(token_id=token.pk, address=actor.address)
                record(action="token.first_use", actor=actor, object_type="token", object_id=token.pk,
                       details={"name": token.name, "prefix": token.prefix, "address": actor.address})
        except IntegrityError:
            pass  # another request from the same new address recorded it first
    with _seen_lock:
        if len(_seen) >= _SEEN_MAX:
            _seen.clear()
        _seen.add(pair)
