"""PTY settings: Django settings win, then the environment, then defaults."""
import os

from django.conf import settings


def _number(name: str, default: float) -> float:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name, "")
    try:
        return float(value) if value != "" else default
    except (TypeError, ValueError):
        return default


def idle_seconds() -> float:
    """A terminal with no output, no input and no attached client for this long is reaped; 0 disables."""
    return _number("AGENTSERVER_PTY_IDLE_SECONDS", 3600)


def max_per_user() -> int:
    """Running terminals a user may hold across all workers; 0 means no limit."""
    return int(_number("AGENTSERVER_PTY_MAX_PER_USER", 20))


def buffer_bytes() -> int:
    """Scrollback kept per terminal for replay (`?cursor=`)."""
    return int(_number("AGENTSERVER_PTY_BUFFER_BYTES", 2 * 1024 * 1024))


def max_pending_input() -> int:
    """Input queued for a child that does not read; beyond it, new input is dropped."""
    return int(_number("AGENTSERVER_PTY_MAX_PENDING_INPUT", 16 * 1024 * 1024))


def remote_timeout() -> float:
    """How long a worker waits for the owner of a terminal to answer through the channel layer."""
    return _number("AGENTSERVER_PTY_REMOTE_TIMEOUT", 5)
