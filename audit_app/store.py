"""The only code that writes audit_app's tables, and its reads of the chain (audit_app/selectors.py reads the
records for people).

An append locks the head row inside the caller's transaction (SELECT … FOR UPDATE on PostgreSQL; SQLite has
one writer at a time anyway), reads the database's clock under that lock, inserts the record at the next
position and moves the head: two statements on PostgreSQL (three on SQLite), and the record commits or rolls
back with the change it records. The lock is held until the caller's transaction ends, so callers record
last, and appends are serialized through their commits: the log's rate is bounded by how fast the database
commits one transaction after another (docs/audit.md gives the measured figures)."""
from __future__ import annotations

import datetime
from collections.abc import Iterator

from django.db import connection
from django.utils import timezone

from audit_app.chain import FIELDS, GENESIS, content_hash
from audit_app.models import AuditRecord, ChainHead


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


_HEAD = _q(ChainHead._meta.db_table)
_RECORDS = _q(AuditRecord._meta.db_table)
_COLUMNS = ("id", "time", *FIELDS, "prev_hash", "hash")
_INSERT = f"INSERT INTO {_RECORDS} ({', '.join(_q(c) for c in _COLUMNS)}) VALUES ({', '.join(['%s'] * len(_COLUMNS))})"
_MOVE = f"UPDATE {_HEAD} SET seq = %s, hash = %s WHERE id = 1"
# PostgreSQL moves the head and inserts the record in one statement: one round trip fewer under the lock.
_INSERT_AND_MOVE = f"WITH moved AS ({_MOVE}) {_INSERT}"
# The session-local setting the trigger lets a delete through with (migration 0002): retention only.
_ALLOW_DELETE = "SELECT set_config('agentserver.audit_retention', 'on', true)"


def _locked_head(cursor) -> tuple[int, str, datetime.datetime]:
    postgres = connection.vendor == "postgresql"
    select = (f"SELECT seq, hash, clock_timestamp() FROM {_HEAD} WHERE id = 1 FOR UPDATE" if postgres
              else f"SELECT seq, hash FROM {_HEAD} WHERE id = 1")
    cursor.execute(select)
    row = cursor.fetchone()
    if row is None:  # a new database (or one a test flushed): start the chain
        conflict = " ON CONFLICT (id) DO NOTHING" if postgres else ""
        cursor.execute(f"INSERT INTO {_HEAD} (id, seq, hash) VALUES (1, 0, %s){conflict}", [GENESIS])
        cursor.execute(select)
        row = cursor.fetchone()
    now = row[2] if postgres else timezone.now()
    return row[0], row[1], now


def append(values: dict) -> AuditRecord:
    """Append one record (FIELDS' values) at the chain's end. Call inside a transaction."""
    with connection.cursor() as cursor:
        seq, prev_hash, now = _locked_head(cursor)
        digest = content_hash(prev_hash, now, values)
        record = AuditRecord(id=seq + 1, time=now, prev_hash=prev_hash, hash=digest, **values)
        row = [record.id, connection.ops.adapt_datetimefield_value(now), *(values[field] for field in FIELDS),
               prev_hash, digest]
        if connection.vendor == "postgresql":
            cursor.execute(_INSERT_AND_MOVE, [record.id, digest, *row])
        else:
            cursor.execute(_INSERT, row)
            cursor.execute(_MOVE, [record.id, digest])
    return record


def head() -> tuple[int, str]:
    """The head row: the last position and its hash (GENESIS before the first record)."""
    row = ChainHead.objects.filter(id=1).values_list("seq", "hash").first()
    return row if row is not None else (0, GENESIS)


def records_from(first_id: int, count: int) -> list[AuditRecord]:
    """Up to `count` records from position `first_id` on, in chain order."""
    return list(AuditRecord.objects.filter(id__gte=first_id).order_by("id")[:count])


def details_of(action: str) -> Iterator[str]:
    """The details (JSON) of every record of `action`."""
    return AuditRecord.objects.filter(action=action).values_list("details", flat=True).iterator()


def remove_older_than(cutoff: datetime.datetime) -> tuple[int, int, int, str] | None:
    """Remove the records older than `cutoff`, all but the newest record, in the caller's transaction, from the
    chain's start (never a hole in its middle): (how many, the first and last removed positions, the last one's
    hash), or None when none is that old."""
    newest = AuditRecord.objects.order_by("-id").values_list("id", flat=True).first()
    doomed = AuditRecord.objects.filter(time__lt=cutoff)
    if newest is not None:
        doomed = doomed.exclude(id=newest)
    last = doomed.order_by("-id").values_list("id", "hash").first()
    if last is None:
        return None
    first_id = doomed.order_by("id").values_list("id", flat=True).first()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_ALLOW_DELETE)
    removed, _ = AuditRecord.objects.filter(id__lte=last[0]).delete()
    return removed, first_id, last[0], last[1]
