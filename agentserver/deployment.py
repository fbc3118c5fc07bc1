"""Which deployment this worker belongs to: AGENTSERVER_DEPLOYMENT when set, else what the database says it
is: on PostgreSQL the cluster's system identifier and the database's name, so every worker on every host
agrees however each spells DATABASE_URL (`localhost` or an address, a default port or not); on SQLite (one
host) the database file's real path. It names the Redis event channel (agentserver/bus.py)."""
from __future__ import annotations

import os
import threading

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
