"""The one wall clock of the server: milliseconds since the epoch, as opencode stores every time.

`now_ms()` is this host's clock, for times that are only recorded. What several hosts compare (leases: who
holds a session, until when) is computed by the database with `DatabaseNow()`, so a host whose clock is a
few seconds off can neither take a live lease nor keep an expired one."""
import time

from django.db.models import BigIntegerField, Func


def now_ms() -> int:
    return int(time.time() * 1000)


class DatabaseNow(Func):
    """The database's clock in epoch milliseconds, as an SQL expression (read anew by each statement)."""

    output_field = BigIntegerField()
    arity = 0

    def as_sql(self, compiler, connection, **extra_context):
        if connection.vendor == "postgresql":
            # clock_timestamp(), not now(): the latter is the transaction's start, stale in a long one.
            return "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint", []
        if connection.vendor == "sqlite":
            return "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)", []
        raise NotImplementedError(f"DatabaseNow on {connection.vendor}")
