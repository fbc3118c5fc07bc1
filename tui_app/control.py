"""The /tui/* control routes for a multi-user server.

opencode forwards them to the one TUI attached to its process. Here a user may run several TUIs (and other
users theirs), so every call goes to the caller's own clients only, two ways:
- as the `tui.*` event (tui.prompt.append, tui.command.execute, tui.toast.show, tui.session.select) on the
  caller's event streams, in the request's directory: what opencode 1.18's TUI acts on;
- as a request `{path, body}` on the caller's control queue, for a control client that long-polls
  `tui.control.next` and answers with `tui.control.response` (opencode's queue bridge). The queue is in the
  database, so any worker can serve either end; requests older than QUEUE_SECONDS, or beyond QUEUE_LIMIT,
  are dropped unread."""
from __future__ import annotations

import time

from django.conf import settings

from agentserver.context import RuntimeContext
from agentserver.errors import NotFound
from agentserver.events import publisher as events
from tui_app import store
from tui_app.models import TuiControlRequest, now_ms

QUEUE_SECONDS = 300
QUEUE_LIMIT = 100
POLL_INTERVAL = 0.2

# The 1.18 TUI's command names for the legacy ones /tui/execute-command still accepts.
COMMAND_ALIASES = {
    "session_new": "session.new", "session_share": "session.share", "session_interrupt": "session.interrupt",
    "session_compact": "session.compact", "messages_page_up": "session.page.up",
    "messages_page_down": "session.page.down", "messages_line_up": "session.line.up",
    "messages_line_down": "session.line.down", "messages_half_page_up": "session.half.page.up",
    "messages_half_page_down": "session.half.page.down", "messages_first": "session.first",
    "messages_last": "session.last", "agent_cycle": "agent.cycle",
}


def wait_seconds() -> float:
    return float(getattr(settings, "TUI_CONTROL_WAIT_SECONDS", 25))


def _enqueue(user, path: str, body) -> None:
    store.enqueue(user, path=path, body=body, dropping_before_ms=now_ms() - QUEUE_SECONDS * 1000, keeping=QUEUE_LIMIT)


def tui_send(*, context: RuntimeContext, path: str, body, event_type: str, properties: dict) -> bool:
    """One /tui/* call: the event for the caller's TUIs and the request for their control client."""
    events.publish_context(event_type, properties, context)
    _enqueue(context.user, path, body)
    return True


def command_name(command: str) -> str:
    return COMMAND_ALIASES.get(command, command)


def _claim(user) -> TuiControlRequest | None:
    return store.claim_oldest_pending(user, made_since_ms=now_ms() - QUEUE_SECONDS * 1000)


def control_next(*, user, wait: float | None = None) -> dict | None:
    """The caller's oldest unread request, waiting up to `wait` seconds for one; None when none came."""
    deadline = time.monotonic() + (wait_seconds() if wait is None else wait)
    while True:
        row = _claim(user)
        if row is not None:
            return {"path": row.path, "body": row.body}
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_INTERVAL)


def control_response(*, user, body) -> bool:
    """Answer the oldest request handed out and not answered yet."""
    if not store.answer_oldest_claimed(user, response=body):
        raise NotFound("No TUI request is waiting for a response")
    return True
