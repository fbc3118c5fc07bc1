"""What is retried, and how: the policy and the loop around one model call's attempts. The step
(runtime/step.py) only says how to make an attempt and how to forget a failed one.

Retried: a provider call failure the provider layer marked retryable (429, 5xx, a dropped connection, a
stream that ended without finishing), as long as no tool of the step has started (a tool may have changed
files; running the step again could repeat that)."""
from __future__ import annotations

import asyncio
import os
from typing import Awaitable, Callable

from agentserver.clock import now_ms
from providers_app.errors import ProviderCallError
from sessions_app.store.leases import BUSY

RETRY_BASE_MS = int(os.environ.get("AGENTSERVER_RETRY_BASE_MS", "2000"))
RETRY_MAX_MS = 30_000


def retry_delay_ms(attempt: int, error: ProviderCallError | None = None) -> int:
    """The provider's retry hint when it gave one, else exponential backoff; never over RETRY_MAX_MS."""
    headers = {k.lower(): v for k, v in ((error.response_headers if error else None) or {}).items()}
    for key, scale in (("retry-after-ms", 1), ("retry-after", 1000)):
        try:
            if key in headers:
                return min(int(float(headers[key]) * scale), RETRY_MAX_MS)
        except ValueError:
            pass
    return min(RETRY_BASE_MS * 2 ** (attempt - 1), RETRY_MAX_MS)


def retryable(error: BaseException, *, tools_started: bool) -> bool:
    return isinstance(error, ProviderCallError) and error.is_retryable and not tools_started


async def with_retries(attempt: Callable[[], Awaitable[None]], *, tools_started: Callable[[], bool],
                       forget_attempt: Callable[[], Awaitable[None]],
                       set_status: Callable[[dict], Awaitable[None]]) -> None:
    """Run `attempt` until it succeeds; a retryable failure shows a `retry` status, forgets what the failed
    attempt wrote and waits before the next. Anything else propagates."""
    number = 0
    while True:
        try:
            await attempt()
            return
        except ProviderCallError as error:
            if not retryable(error, tools_started=tools_started()):
                raise
            number += 1
            delay = retry_delay_ms(number, error)
            await set_status({"type": "retry", "attempt": number, "message": error.message, "next": now_ms() + delay})
            await forget_attempt()
            await asyncio.sleep(delay / 1000)
            await set_status(BUSY)
