"""Which workers of the deployment are alive.

Each worker (server process) has one id, WORKER_ID: its host name, pid and a random token, so two hosts
with one host name never share an id, and neither do two lives of one pid. What a worker owns in the
database (PTY rows) names it by this id.

With Redis (the scaled mode, any number of hosts) each worker keeps a key with a time to live
(AGENTSERVER_WORKER_TTL_SECONDS), refreshed three times per TTL from its event loop: a worker whose key is
gone is dead (crashed, killed with -9, its host lost) at most a TTL after its last beat. Without Redis (the
embedded default, one host) a worker is alive while its process is."""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import threading

from django.conf import settings

log = logging.getLogger(__name__)

HOST = socket.gethostname()
WORKER_ID = f"{HOST}:{os.getpid()}:{secrets.token_hex(4)}"

_beating: asyncio.Task | None = None
_namespace: str | None = None
_sync_client = None
_lock = threading.Lock()


def ttl_seconds() -> float:
    return settings.WORKER_TTL_SECONDS


def _key(worker_id: str) -> str:
    return f"{_namespace_now()}.worker.{worker_id}"


def _namespace_now() -> str:
    """The deployment's Redis event channel names the keys too (synchronous: may read the database once)."""
    global _namespace
    if _namespace is None:
        from agentserver import bus

        _namespace = bus.bridge().channel
    return _namespace


def _client():
    global _sync_client
    with _lock:
        if _sync_client is None:
            import redis

            _sync_client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5)
        return _sync_client


async def start() -> None:
    """Announce this worker (the first beat is written before this returns) and keep it announced; on the
    loop, idempotent. Call before writing rows that name WORKER_ID."""
    global _beating
    if not settings.REDIS_URL or (_beating is not None and not _beating.done()):
        return
    from agentserver.loop import free_db

    await free_db(_namespace_now)()
    await _beat()
    _beating = asyncio.get_running_loop().create_task(_beat_forever())


async def _beat() -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(settings.REDIS_URL)
    try:
        await client.set(_key(WORKER_ID), "1", px=int(ttl_seconds() * 1000))
    finally:
        await client.aclose()


async def _beat_forever() -> None:
    while True:
        await asyncio.sleep(ttl_seconds() / 3)
        try:
            await _beat()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("worker heartbeat to Redis failed")


def stop() -> None:
    """On a clean exit: the others need not wait out the TTL."""
    if _beating is not None:
        _beating.cancel()
    if settings.REDIS_URL and _namespace is not None:
        try:
            _client().delete(_key(WORKER_ID))
        except Exception:
            log.warning("could not withdraw this worker's heartbeat", exc_info=True)


def alive(worker_ids: set[str]) -> set[str]:
    """Which of these workers are alive (synchronous; one Redis round trip)."""
    found = {WORKER_ID} & worker_ids
    others = sorted(worker_ids - found)
    if not others:
        return found
    if settings.REDIS_URL:
        with _client().pipeline(transaction=False) as pipe:
            for worker_id in others:
                pipe.exists(_key(worker_id))
            return found | {w for w, exists in zip(others, pipe.execute()) if exists}
    return found | {w for w in others if _process_alive(w)}


def _process_alive(worker_id: str) -> bool:
    """Without Redis all workers share this host: one is alive while its process is."""
    host, _, rest = worker_id.partition(":")
    pid_text = rest.partition(":")[0]
    if host != HOST or not pid_text.isdigit():
        return True  # not ours to judge
    pid = int(pid_text)
    if pid == os.getpid():
        return False  # our pid, but an earlier life of this worker
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
