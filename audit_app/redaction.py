"""What a record may say: never a secret (a key, a password, a token, an environment's values), and never
more than a bounded summary of what an agent gave a tool."""
from __future__ import annotations

import re

REDACTED = "[redacted]"
MAX_STRING = 500
MAX_ITEMS = 50
MAX_DEPTH = 5
# A key naming a secret: its value never reaches a record, whatever it is.
SECRET_KEY = re.compile(r"pass(word|wd)?|secret|token|api[_-]?key|^key$|credential|authorization|cookie|"
                        r"private|refresh|access|^env(ironment)?$|^headers$|client_secret|digest|^hash",
                        re.IGNORECASE)
# Values that look like a secret wherever they appear (bearer tokens, our own tokens, provider keys).
SECRET_VALUE = re.compile(
    r"\b(as_[A-Za-z0-9_-]{20,}|(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})")
# `NAME=value` / `name: value` where the name says secret (an exported key in a shell command, a header).
SECRET_ASSIGNMENT = re.compile(r"(?i)\b(\w*(?:api[_-]?key|secret|token|password|passwd)\w*[\"']?)(\s*[=:]\s*)([\"']?)"
                               r"[^\s\"',;]{6,}")


def redact(value, *, depth: int = 0):
    """A JSON-safe copy of `value` with secrets replaced, strings cut at MAX_STRING, lists and objects at
    MAX_ITEMS entries, nesting at MAX_DEPTH."""
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            return "{…}"
        out = {}
        for index, (key, item) in enumerate(value.items()):
            if index >= MAX_ITEMS:
                out["…"] = f"{len(value) - MAX_ITEMS} more"
                break
            key = str(key)[:100]
            out[key] = REDACTED if SECRET_KEY.search(key) and item not in (None, "", [], {}) else redact(
                item, depth=depth + 1)
        return out
    if isinstance(value, (list, tuple, set)):
        if depth >= MAX_DEPTH:
            return "[…]"
        items = [redact(item, depth=depth + 1) for item in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"… {len(value) - MAX_ITEMS} more")
        return items
    if isinstance(value, str):
        return text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value if not isinstance(value, int) or abs(value) < 2 ** 63 else str(value)
    return text(str(value))


def text(value: str, limit: int = MAX_STRING) -> str:
    value = SECRET_VALUE.sub(REDACTED, value.replace("\x00", "\\0"))
    value = SECRET_ASSIGNMENT.sub(rf"\1\2\3{REDACTED}", value)
    return value if len(value) <= limit else value[:limit] + f"… ({len(value)} characters)"
