"""Every live connection of this worker (an event stream, a terminal's WebSocket), held under the credential that
opened it, and the one way a credential's connections end: `end(credential)`, on the loop.

A credential is an API token's id (int), a signed-in browser's session ("session:<key>") or a user as a whole
("user:<id>", what a one-time terminal ticket stands for). It ends where this worker is told (revocation,
sign-out, a password change: `events.revoke_token` reaches every worker through the Redis bridge) and, for
what nobody announces (expiry, a deactivated user or a password changed in the admin or a shell, another
process without Redis), when the watch finds it no longer stands: one query per SSE_HEARTBEAT_SECONDS per
worker, with the check auth_app hands in at start-up (`check_credentials_with`). Loop thread only."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from django.conf import settings
from django.db import connection as db_connection

from agentserver.workers import loop as server_loop

log = logging.getLogger(__name__)

CredentialId = int | str
# `live(credential ids)` → those of them that still stand. Runs on a thread of the loop's executor.
LiveCredentials = Callable[[set[CredentialId]], set[CredentialId]]


class Connection(Protocol):
    def close(self, reason: str) -> None:
        """End the connection soon (it must not block: it runs on the loop)."""


_held: dict[CredentialId, set[Connection]] = {}
_live: LiveCredentials | None = None
_watch: asyncio.Task | None = None


def check_credentials_with(live: LiveCredentials) -> None:
    """How to tell which credentials still stand (AuthAppConfig.ready: auth_app knows tokens and sessions)."""
    global _live
    _live = live


def hold(credential: CredentialId, connection: Connection) -> None:
    """Keep `connection` until `release`; it is closed when `credential` ends."""
    _held.setdefault(credential, set()).add(connection)
    _ensure_watch()


def release(credential: CredentialId, connection: Connection) -> None:
    connections = _held.get(credential)
    if connections is not None:
        connections.discard(connection)
        if not connections:
            del _held[credential]


def end(credential: CredentialId, reason: str = "revoked") -> None:
    """Close every connection of this worker that `credential` opened."""
    for connection in tuple(_held.get(credential, ())):
        try:
            connection.close(reason)
        except Exception:
            log.exception("could not close a connection of an ended credential")


def held() -> set[CredentialId]:
    return set(_held)


def _still_live(credentials: set[CredentialId]) -> set[CredentialId]:
    try:
        return _live(credentials)
    finally:
        db_connection.close()


async def _watch_credentials() -> None:
    while _held:
        await asyncio.sleep(settings.SSE_HEARTBEAT_SECONDS)
        credentials = held()
        if not credentials or _live is None:
            continue
        try:
            live = await server_loop.free_db(_still_live)(credentials)
        except Exception:
            log.exception("could not check the credentials of open connections")
            continue
        for credential in credentials - live:
            end(credential, "expired")


def _ensure_watch() -> None:
    global _watch
    if _watch is None or _watch.done():
        _watch = asyncio.get_running_loop().create_task(_watch_credentials())
