"""Usage rows as CSV and JSON lines, for finance and scripts."""
from __future__ import annotations

import csv
import io
import json

KEYS = ("day", "personID", "person", "providerID", "modelID", "sessionID")
COLUMNS = ("calls", "failedCalls", "unpricedCalls", "unreportedCalls", "inputTokens", "outputTokens",
           "reasoningTokens", "cacheReadTokens", "cacheWriteTokens", "cost", "durationMs")


def flat(row: dict) -> dict:
    tokens = row["tokens"]
    return {**{key: row[key] for key in KEYS if key in row},
            "calls": row["calls"], "failedCalls": row["failedCalls"], "unpricedCalls": row["unpricedCalls"],
            "unreportedCalls": row["unreportedCalls"], "inputTokens": tokens["input"],
            "outputTokens": tokens["output"], "reasoningTokens": tokens["reasoning"],
            "cacheReadTokens": tokens["cache"]["read"], "cacheWriteTokens": tokens["cache"]["write"],
            "cost": row["cost"], "durationMs": row["durationMs"]}


def as_csv(rows: list[dict], group_by: str | None) -> str:
    keys = [key for key in KEYS if rows and key in rows[0]] or _keys_of(group_by)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*keys, *COLUMNS], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(flat(row))
    return out.getvalue()


def as_json_lines(rows: list[dict]) -> str:
    return "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)


def _keys_of(group_by: str | None) -> list[str]:
    keys = {"day": ["day"], "person": ["personID", "person"], "model": ["providerID", "modelID"],
            "provider": ["providerID"], "session": ["personID", "person", "sessionID"]}
    return [key for part in (group_by.split(",") if group_by else []) for key in keys[part]]
