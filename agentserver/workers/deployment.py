"""Which deployment this worker belongs to: AGENTSERVER_DEPLOYMENT when set, else what the database says it
is: on PostgreSQL the cluster's system identifier and the database's name, so every worker on every host
agrees however each spells DATABASE_URL (`localhost` or an address, a default port or not); on SQLite (one
host) the database file's real path. It names the Redis event channel (agentserver/events/bus.py) and the workers' liveness keys
(agentserver/workers/liveness.py)."""
from __future__ import annotations

import hashlib
import os
import threading
from urllib.parse import urlparse

from django.conf import settings

_lock = threading.Lock()
_identity: str | None = None


def identity() -> str:
    """Synchronous (a database query the first time); cached for the life of the process."""
    global _identity
    if settings.DEPLOYMENT:
        return settings.DEPLOYMENT
    with _lock:
        if _identity is None:
            _identity = _from_database()
        return _identity


def _from_database() -> str:
    from django.db import connections

    connection = connections["default"]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT system_identifier::text || '/' || current_database() FROM pg_control_system()")
            return f"postgresql:{cursor.fetchone()[0]}"
    return f"{connection.vendor}:{os.path.realpath(str(connection.settings_dict['NAME']))}"


def redis_channel(url: str) -> str:
    """Pub/sub ignores Redis database numbers, and owner ids are only unique within one database: the
    channel names the deployment (`identity`: one however a host spells DATABASE_URL) and the Redis
    database, so two deployments (or test runs) sharing a Redis never see each other's events, and every
    host of one deployment sees all of them. Synchronous: reads the database once."""
    identity_and_database = f"{identity()}|{urlparse(url).path}"
    return "agentserver.events.publisher." + hashlib.sha256(identity_and_database.encode()).hexdigest()[:16]
