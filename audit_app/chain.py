"""The hash chain. Each record's hash is sha256 over the previous record's hash and the canonical JSON of its
own content (orjson, sorted keys); the head row (ChainHead, id 1) holds the last position and hash.

An append locks the head row inside the caller's transaction (SELECT … FOR UPDATE on PostgreSQL; SQLite has
one writer at a time anyway), reads the database's clock under that lock, inserts the record at the next
position and moves the head: two statements on PostgreSQL (three on SQLite), and the record commits or rolls
back with the change it records. The lock is held until the caller's transaction ends, so callers record
last, and appends are serialized through their commits: the log's rate is bounded by how fast the database
commits one transaction after another (docs/audit.md gives the measured figures)."""
from __future__ import annotations

import datetime
import hashlib

import orjson
from django.db import connection
from django.utils import timezone

from audit_app.models import AuditRecord, ChainHead

GENESIS = "0" * 64
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
FIELDS = ("actor_person", "actor_name", "actor_token", "actor_address", "actor_user_agent", "actor_session",
          "action", "object_type", "object_id", "outcome", "session", "details")


def micros(moment: datetime.datetime) -> int:
    return (moment - _EPOCH) // datetime.timedelta(microseconds=1)


def content_hash(prev_hash: str, time: datetime.datetime, values: dict) -> str:
    """The hash of one record: its previous hash, its time in microseconds and its FIELDS."""
    content = {"time": micros(time), **{field: values[field] for field in FIELDS}}
    return hashlib.sha256(prev_hash.encode() + orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


def record_hash(record: AuditRecord) -> str:
    return content_hash(record.prev_hash, record.time, {field: getattr(record, field) for field in FIELDS})


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


_HEAD = _q(ChainHead._meta.db_table)
_RECORDS = _q(AuditRecord._meta.db_table)
_COLUMNS = ("id", "time", *FIELDS, "prev_hash", "hash")
_INSERT = f"INSERT INTO {_RECORDS} ({', '.join(_q(c) for c in _COLUMNS)}) VALUES ({', '.join(['%s'] * len(_COLUMNS))})"
_MOVE = f"UPDATE {_HEAD} SET seq = %s, hash = %s WHERE id = 1"
# PostgreSQL moves the head and inserts the record in one statement: one round trip fewer under the lock.
_INSERT_AND_MOVE = f"WITH moved AS ({_MOVE}) {_INSERT}"


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
    row = ChainHead.objects.filter(id=1).values_list("seq", "hash").first()
    return row if row is not None else (0, GENESIS)
