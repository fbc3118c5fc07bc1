"""One runner's hold on its session's lease, and on the leases of the child sessions its task calls answer.

The holder name is the runner's own (its worker's id and a nonce), not the worker's: a runner that has let go
can then never renew, hand over or release the lease of a later runner of the same session in the same
worker. Renewal, acquisition, release and hand-over take turns under one lock, and renewal only touches the
leases the keeper still holds: a renewal in flight can never land after a release (and be read as "lost its
lease"), nor give a handed-over lease back its time."""
from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor

from agentserver.workers.loop import db, free_db, on_executor
from sessions_app.runtime import leases

# Renewals have a thread of their own, shared by the worker's runners (each is one short UPDATE): behind the
# loop's default executor, busy with other calls on a loaded machine, they waited past the lease and every
# runner of the worker lost its session at once.
_RENEWALS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lease-renewal")


class LeaseKeeper:
    def __init__(self, session_id: str, worker_id: str):
        self.session_id = session_id
        self.holder = f"{worker_id}:{uuid.uuid4().hex[:12]}"
        self._turn = asyncio.Lock()
        self._held: set[str] = set()

    @property
    def holds_own(self) -> bool:
        return self.session_id in self._held

    async def acquire(self, session_id: str | None = None) -> bool:
        session_id = session_id or self.session_id
        async with self._turn:
            taken = await db(leases.acquire)(session_id, self.holder)
            if taken:
                self._held.add(session_id)
            return taken

    async def release(self, session_id: str | None = None) -> None:
        session_id = session_id or self.session_id
        async with self._turn:
            self._held.discard(session_id)
            await db(leases.release)(session_id, self.holder)

    async def hand_over(self, *, on_any_thread: bool = False) -> None:
        """Let the session's lease expire while still held, so another worker's janitor adopts it."""
        call = free_db if on_any_thread else db
        async with self._turn:
            self._held.discard(self.session_id)
            await call(leases.hand_over)(self.session_id, self.holder)

    def forget(self) -> None:
        """The session's lease is lost (expired past renewal): the keeper holds it no more, and the runner
        writes nothing more to the session, whose next holder goes on with it (runtime/resume.py)."""
        self._held.discard(self.session_id)

    async def set_status(self, session_id: str, status: dict) -> None:
        await db(leases.set_status)(session_id, self.holder, status)

    async def renew(self) -> bool | None:
        """Renew every lease still held: False when the session's own is no longer ours (expired, then taken
        elsewhere), None when the keeper holds it no more (released or handed over), else True."""
        async with self._turn:
            if self.session_id not in self._held:
                return None
            for session_id in [self.session_id, *sorted(self._held - {self.session_id})]:
                renewed = await on_executor(_RENEWALS, leases.renew)(session_id, self.holder)
                if session_id == self.session_id and not renewed:
                    self._held.discard(session_id)
                    return False
            return True
