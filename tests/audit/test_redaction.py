"""What an audit record may hold: never a secret, and never an unbounded copy of an agent's input."""
from audit_app.redaction import MAX_ITEMS, MAX_STRING, REDACTED, redact


def test_fields_named_as_secrets_are_redacted_whatever_they_hold():
    shown = redact({"password": "hunter2", "apiKey": "abc", "client_secret": "x", "environment": {"A": "b"},
                    "headers": {"X": "y"}, "refresh": "r", "filePath": "/srv/a.txt", "empty_token": ""})
    assert shown == {"password": REDACTED, "apiKey": REDACTED, "client_secret": REDACTED, "environment": REDACTED,
                     "headers": REDACTED, "refresh": REDACTED, "filePath": "/srv/a.txt", "empty_token": ""}


def test_secrets_inside_text_are_redacted():
    command = ("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstu; curl -H 'Authorization: Bearer abcdefghijkl' "
               "--token as_0123456789abcdefghijklmnop AKIAABCDEFGHIJKLMNOP")
    shown = redact({"command": command})["command"]
    for secret in ("sk-abcdefghijklmnopqrstu", "abcdefghijkl", "as_0123456789abcdefghijklmnop", "AKIAABCDEFGHIJKLMNOP"):
        assert secret not in shown
    assert shown.startswith("export OPENAI_API_KEY=[redacted]") and "curl" in shown


def test_long_inputs_are_cut_and_nul_characters_escaped():
    shown = redact({"content": "x" * 10_000, "items": list(range(200)), "nul": "a\x00b"})
    assert len(shown["content"]) < MAX_STRING + 40 and shown["content"].endswith("(10000 characters)")
    assert len(shown["items"]) == MAX_ITEMS + 1 and shown["nul"] == "a\\0b"
