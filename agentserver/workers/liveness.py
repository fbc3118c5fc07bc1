"""Which workers of the deployment are alive.

Each worker (server process) has one id, WORKER_ID: its machine (host name, boot id and pid namespace), pid
and a random token, so two hosts with one host name never share an id, and neither do two lives of one pid.
What a worker owns in the database (PTY rows) names it by this id.

With Redis (the scaled mode, any number of hosts) each worker keeps a key with a time to live
(AGENTSERVER_WORKER_TTL_SECONDS), refreshed three times per TTL from its event loop: a worker whose key is
gone is dead (crashed, killed with -9, its host lost) at most a TTL after its last beat; one on this very
machine is known dead at once when its process is gone. Without Redis (the embedded default, one host) a
worker is alive while its process is."""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable

from django.conf import settings

from agentserver.workers import deployment

log = logging.getLogger(__name__)

HOST = socket.gethostname()


def _machine() -> str:
    """The host name alone is not enough (two machines may share one), nor the boot id (containers share
    it): both, and the pid namespace, say whose pids a worker id's pid is."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            boot = handle.read().strip().replace("-", "")[:12]
    except OSError:
        boot = "unknown"
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return f"{HOST}#{boot}.{namespace:x}"


MACHINE = _machine()
WORKER_ID = f"{MACHINE}:{os.getpid()}:{secrets.token_hex(4)}"

_beating: asyncio.Task | None = None
_namespace: str | None = None
_sync_client = None
_lock = threading.Lock()
_presumed_dead_hooks: list[Callable[[], None]] = []


def ttl_seconds() -> float:
    return settings.WORKER_TTL_SECONDS


def _key(worker_id: str) -> str:
    return f"{_namespace_now()}.worker.{worker_id}"


def _namespace_now() -> str:
    """The deployment's Redis event channel names the keys too (synchronous: may read the database once)."""
    global _namespace
    if _namespace is None:
        _namespace = deployment.redis_channel(settings.REDIS_URL)
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
    from agentserver.workers.loop import free_db

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


def on_presumed_dead(hook: Callable[[], None]) -> None:
    """Call `hook` (on the loop) when this worker has not beaten for a whole TTL: its key has expired, so the
    other workers take it for dead and remove what it owns (its terminals' rows). What it still runs of
    that must end, or it would go on unseen: a worker cut off from Redis, not dead."""
    _presumed_dead_hooks.append(hook)


async def _beat_forever() -> None:
    last_beat, told = time.monotonic(), False
    while True:
        await asyncio.sleep(ttl_seconds() / 3)
        try:
            await asyncio.wait_for(_beat(), ttl_seconds() / 3)
            last_beat, told = time.monotonic(), False
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("worker heartbeat to Redis failed")
            if not told and time.monotonic() - last_beat >= ttl_seconds():
                told = True
                log.error("no heartbeat for %.0f s: the other workers take this one for dead", ttl_seconds())
                for hook in list(_presumed_dead_hooks):
                    try:
                        hook()
                    except Exception:
                        log.exception("a presumed-dead hook failed")


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
    if not settings.REDIS_URL:  # one host: every worker's pid is one of ours
        return found | {w for w in others if _process_alive(w)}
    here = [w for w in others if _machine_of(w) == MACHINE]
    found |= {w for w in here if _process_alive(w)}
    elsewhere = [w for w in others if _machine_of(w) != MACHINE]
    if elsewhere:
        with _client().pipeline(transaction=False) as pipe:
            for worker_id in elsewhere:
                pipe.exists(_key(worker_id))
            found |= {w for w, exists in zip(elsewhere, pipe.execute()) if exists}
    return found


def _machine_of(worker_id: str) -> str:
    return worker_id.rsplit(":", 2)[0]


def _process_alive(worker_id: str) -> bool:
    parts = worker_id.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return True  # not ours to judge
    pid = int(parts[1])
    if pid == os.getpid():
        return False  # our pid, but an earlier life of this worker
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
