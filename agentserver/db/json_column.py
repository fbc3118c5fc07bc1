"""JSON columns that keep any JSON value, NUL characters included, on both databases.

PostgreSQL's jsonb cannot hold U+0000 in a string ("unsupported Unicode escape sequence"), and a NUL reaches
these columns easily: a command's output in a tool part, a model's text, a client's metadata. Stored as it is,
such a value was a 500 on PostgreSQL (or a failed turn) and fine on SQLite. So strings (and keys) are stored
escaped, on both databases alike: U+E000 (a private-use character, the escape) is doubled, and U+0000 becomes
U+E000 followed by "0". Reading undoes it, so the value a client gets back is the one it gave. A value with
neither character, almost all of them, is stored and read unchanged; checking for them is a scan in C.

Every JSON column is this `JSONField`; code that reads a column as text (`CAST(... AS TEXT)`, to hand it to
the wire unparsed) passes the text through `wire_text`, and code that parses it itself uses `loads`."""
from __future__ import annotations

import json
import re

import orjson
from django.db import models

ESCAPE = "\ue000"
_ESCAPED = re.compile(ESCAPE + "(.)", re.DOTALL)
# How the escape looks in stored text: PostgreSQL gives the character back, SQLite keeps json.dumps' escape.
_MARKERS = (ESCAPE, "\\ue000")


_ESCAPE_UTF8 = ESCAPE.encode()


def _needs_escape(value) -> bool:
    """Whether any string in `value` holds U+0000 or the escape. orjson writes the value out in C (NUL as the
    six characters \\u0000, U+E000 as its UTF-8 bytes), and both are looked for in that: a walk over every
    string in Python was most of what preparing a part's JSON cost. A backslash written before "u0000" is a false alarm,
    which costs only the escaping that then changes nothing."""
    if isinstance(value, str):
        return "\0" in value or ESCAPE in value
    if not isinstance(value, (dict, list, tuple)):
        return False
    try:
        text = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):  # keys that are not strings, integers past 64 bits
        return _walk_needs_escape(value)
    return b"\\u0000" in text or _ESCAPE_UTF8 in text


def _walk_needs_escape(value) -> bool:
    if isinstance(value, str):
        return "\0" in value or ESCAPE in value
    if isinstance(value, dict):
        return any(_walk_needs_escape(key) or _walk_needs_escape(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(_walk_needs_escape(item) for item in value)
    return False


def _escaped(value):
    if isinstance(value, str):
        return value.replace(ESCAPE, ESCAPE + ESCAPE).replace("\0", ESCAPE + "0")
    if isinstance(value, dict):
        return {_escaped(key): _escaped(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(item) for item in value]
    return value


def _unescaped(value):
    if isinstance(value, str):
        return _ESCAPED.sub(lambda m: ESCAPE if m.group(1) == ESCAPE else "\0", value) if ESCAPE in value else value
    if isinstance(value, dict):
        return {_unescaped(key): _unescaped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unescaped(item) for item in value]
    return value


def to_stored(value):
    """The value as the column keeps it."""
    return _escaped(value) if _needs_escape(value) else value


def _parse(text: str | bytes):
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # integers past 64 bits, NaN: the standard parser takes them
        return json.loads(text)


def _has_marker(text: str | bytes) -> bool:
    if isinstance(text, bytes):
        return any(marker.encode() in text for marker in _MARKERS)
    return any(marker in text for marker in _MARKERS)


def loads(text: str | bytes):
    """A column's value from its stored text."""
    value = _parse(text)
    return _unescaped(value) if _has_marker(text) else value


def wire_text(text: str) -> str:
    """A column's stored text as JSON text of the value it holds (unchanged unless it holds an escape)."""
    return orjson.dumps(loads(text)).decode() if _has_marker(text) else text


class JSONField(models.JSONField):
    def get_prep_value(self, value):
        return to_stored(super().get_prep_value(value))

    def from_db_value(self, value, expression, connection):
        marked = isinstance(value, (str, bytes)) and _has_marker(value)
        value = super().from_db_value(value, expression, connection)
        return _unescaped(value) if marked else value
