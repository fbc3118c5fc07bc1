"""agentserver/db/json_column.py's escape, value by value: what needs it, and that storing then reading gives the
value back (the end-to-end NUL tests are tests/runner/test_nul_characters.py)."""
import json

import pytest

from agentserver.db.json_column import ESCAPE, loads, to_stored

VALUES = [
    {"a": "x\0y"}, {"a": ["b", {"c": ESCAPE}]}, {"k\0": 1}, [1, 2, "\\u0000"], {"a": 2**70, "b": "\0"},
    ("t\0", "u"), "x\0" + ESCAPE + "0", {"deep": [[[{"e": "\0" * 3}]]]},
]
PLAIN = [{"a": "plain", "b": [1, 2.5, None, True]}, {"a": "\x01\x1f é 日本"}, {"a": 2**70}, [], {}, "text", 7]


@pytest.mark.parametrize("value", VALUES + PLAIN)
def test_a_stored_value_reads_back_as_it_was(value):
    stored = to_stored(value)
    text = json.dumps(stored)
    assert "\\u0000" not in text.replace("\\\\u0000", "")  # no NUL reaches the database
    expected = list(value) if isinstance(value, tuple) else value
    assert loads(text) == expected


@pytest.mark.parametrize("value", PLAIN)
def test_a_value_without_nul_or_the_escape_is_stored_unchanged(value):
    assert to_stored(value) is value
