"""The one wait of a tool for the user's reply to a request row (a permission request or a question).

The row is the truth, not a worker's memory: the waiting tool polls it, so a reply that reaches another
worker still unblocks it, and a pending request survives a restart of the worker that asked. Its life:
pending → replied (answered) → used (the waiting tool read an allowing answer and went on, so a restart
must not re-run the call; runtime/resume.py reads this) — or rejected."""
from __future__ import annotations

import asyncio
from typing import Callable, TypeVar

from agentserver.loop import free_db


POLL_SECONDS = 0.1
Row = TypeVar("Row")
Result = TypeVar("Result")


async def wait_for_reply(*, read: Callable[[], Row], is_pending: Callable[[Row], bool],
                         settle: Callable[[Row], Result], give_up: Callable[[], None],
                         rejected: Callable[[], BaseException], abort: asyncio.Event | None = None) -> Result:
    """Poll `read()` (sync, ORM) until the row is no longer pending, then return `settle(row)` (sync: marks
    the row used and returns the answer, or raises the rejection). `abort` set while waiting: `give_up()`
    (sync: rejects the row) and raise `rejected()`. A cancelled wait leaves the row as it is, for the next
    run or the session's abort."""
    read_async = free_db(read)
    while True:
        row = await read_async()
        if not is_pending(row):
            return await free_db(settle)(row)
        if abort is not None and abort.is_set():
            await free_db(give_up)()
            raise rejected()
        await _pause(abort)


async def _pause(abort: asyncio.Event | None) -> None:
    if abort is None:
        await asyncio.sleep(POLL_SECONDS)
        return
    try:
        await asyncio.wait_for(abort.wait(), POLL_SECONDS)
    except asyncio.TimeoutError:
        pass


