"""Walking the chain: the first record that was changed, removed or put out of order, by its position.

- a record whose hash is not the hash of its content: changed (by hand, in the database);
- a gap in the positions: records removed (retention removes only the oldest, and its record vouches for the
  gap: its details carry the last removed position and hash, and the chain goes on from that hash);
- a record whose previous hash is not the hash of the record before it: out of order (moved or inserted);
- the head row ahead of the last record: the newest records removed."""
from __future__ import annotations

from dataclasses import dataclass

import orjson

from audit_app import chain, store

BATCH = 5000
RETENTION = "audit.retention"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    checked: int
    record_id: int | None = None   # the first record found wrong (or where the removal shows)
    problem: str = ""

    def __str__(self) -> str:
        if self.ok:
            return f"The audit chain verifies: {self.checked} records."
        return f"The audit chain is broken at record #{self.record_id}: {self.problem}"


def _anchors() -> dict[int, str]:
    """Retention's anchors: last removed position → its hash."""
    anchors = {}
    for details in store.details_of(RETENTION):
        data = orjson.loads(details)
        if isinstance(data.get("lastId"), int) and isinstance(data.get("lastHash"), str):
            anchors[data["lastId"]] = data["lastHash"]
    return anchors


def verify() -> Verdict:
    anchors = _anchors()
    expected_id, expected_prev, checked, last_id = 1, chain.GENESIS, 0, 0
    while True:
        batch = store.records_from(expected_id, BATCH)
        if not batch:
            break
        for record in batch:
            if chain.record_hash(record) != record.hash:
                return Verdict(False, checked, record.id, "its content was changed after it was written")
            if record.id != expected_id:
                if checked == 0 and anchors.get(record.id - 1) == record.prev_hash:
                    expected_prev = record.prev_hash  # the oldest records left by retention, which says so
                else:
                    return Verdict(False, checked, record.id,
                                   f"the record(s) before it (#{expected_id}…#{record.id - 1}) were removed")
            if record.prev_hash != expected_prev:
                return Verdict(False, checked, record.id,
                               "it is out of order: its previous hash is not the hash of the record before it")
            expected_id, expected_prev, last_id = record.id + 1, record.hash, record.id
            checked += 1
    seq, head_hash = store.head()
    if seq != last_id or (checked and head_hash != expected_prev):
        return Verdict(False, checked, last_id + 1,
                       f"the newest record(s), up to #{seq}, were removed or the head was changed")
    return Verdict(True, checked)
