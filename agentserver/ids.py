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


_MASK = (1 << 48) - 1


def _next_time_value() -> int:
    """This process's next time value: never below one it made or observed (`observe`), even when the
    host's clock is behind another's or steps back."""
    global _last_ms, _counter
    with _lock:
        now = max(now_ms(), _last_ms)
        if now != _last_ms:
            _last_ms = now
            _counter = 0
        _counter += 1
        return now * 4096 + _counter


def observe(existing: str | None) -> None:
    """Ascending ids this process makes from now on sort after `existing` (an id another host may have made
    with a clock ahead of ours): a new message always sorts after the session's newest."""
    global _last_ms, _counter
    if not existing or len(existing) < 16 or existing[:3] in DESCENDING:
        return
    try:
        low = int(existing[4:16], 16)
    except ValueError:
        return
    with _lock:
        current = max(now_ms() * 4096, _last_ms * 4096 + _counter)
        # Ids keep the low 48 bits of the time value: lift `low` to the full value nearest ours.
        value = (current & ~_MASK) | low
        if value - current > (1 << 47):
            value -= 1 << 48
        elif current - value > (1 << 47):
            value += 1 << 48
        if value >= current:
            _last_ms, _counter = divmod(value, 4096)


def ascending_after(prefix: str, existing: str | None) -> str:
    """An ascending id that sorts after `existing`, whatever this host's clock says."""
    observe(existing)
    return ascending(prefix)


def create(prefix: str, descending: bool | None = None) -> str:
    if descending is None:
        descending = prefix in DESCENDING
    value = _next_time_value()
    if descending:
        value = ~value
    value &= _MASK
    return f"{prefix}_{value:012x}{_random_tail()}"


def ascending(prefix: str) -> str:
    return create(prefix, descending=False)


def descending(prefix: str) -> str:
    return create(prefix, descending=True)


def ascending_floor(prefix: str, ms: int) -> str:
    """Sorts before every ascending id a host made at `ms` or later (until the 48 bits wrap, every ~2.2 years)."""
    return f"{prefix}_{(ms * 4096) & _MASK:012x}"


def matches(prefix: str, value: object) -> bool:
    return isinstance(value, str) and value.startswith(prefix)


ID_PATTERN = re.compile(r"^[a-z]{3}_[0-9a-f]{12}[0-9A-Za-z]{14}$")
