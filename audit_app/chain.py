"""The hash chain. Each record's hash is sha256 over the previous record's hash and the canonical JSON of its
own content (orjson, sorted keys); the head row (ChainHead, id 1) holds the last position and hash.
audit_app/store.py appends to it; audit_app/verify.py walks it."""
from __future__ import annotations

import datetime
import hashlib

import orjson

from audit_app.models import AuditRecord

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
