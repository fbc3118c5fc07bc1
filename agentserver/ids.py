"""opencode's identifier scheme (reference §1): prefix + "_" + 12 hex + 14 base62.

The 12 hex digits are the low 48 bits of ms*4096+counter, so ascending ids sort in creation order;
descending ids (sessions) invert the bits so the newest sorts first."""
import re
import secrets
import threading

from agentserver.clock import now_ms

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_lock = threading.Lock()
_last_ms = 0
_counter = 0

PREFIXES = {
    "session": "ses",
    "message": "msg",
    "part": "prt",
    "permission": "per",
    "question": "que",
    "pty": "pty",
    "event": "evt",
    "user": "usr",
    "workspace": "wrk",
    "account": "acc",
    "share": "shr",
}
DESCENDING = {"ses"}


def _random_tail(length: int = 14) -> str:
    return "".join(_ALPHABET[b % 62] for b in secrets.token_bytes(length))


def _next_time_value() -> int:
    global _last_ms, _counter
    with _lock:
        now = now_ms()
        if now != _last_ms:
            _last_ms = now
            _counter = 0
        _counter += 1
        return now * 4096 + _counter


def create(prefix: str, descending: bool | None = None) -> str:
    if descending is None:
        descending = prefix in DESCENDING
    value = _next_time_value()
    if descending:
        value = ~value
    value &= (1 << 48) - 1
    return f"{prefix}_{value:012x}{_random_tail()}"


def ascending(prefix: str) -> str:
    return create(prefix, descending=False)


def descending(prefix: str) -> str:
    return create(prefix, descending=True)


def matches(prefix: str, value: object) -> bool:
    return isinstance(value, str) and value.startswith(prefix)


ID_PATTERN = re.compile(r"^[a-z]{3}_[0-9a-f]{12}[0-9A-Za-z]{14}$")
