"""The snapshots of one step (reference §5.2 step 10): the tree before and after it on its step-start and
step-finish parts, then a `patch` part and the session's diff summary when it changed files.

A StepSnapshots belongs to one turn and keeps its own state (the repository, the trees of the step in
progress). A step starts from the tree the previous step of the turn ended with, taken a moment before:
tracking the tree again in between cost a third of a tool-calling prompt's git runs. Each call returns
quickly when snapshots are off; git runs in a worker thread (runtime/snapshots.py `run`), the ORM in
the runner's thread. A snapshot failure never fails the turn."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from agentserver.workers.loop import db
from sessions_app.runtime.snapshots import Snapshots, for_context, run

log = logging.getLogger(__name__)


class StepSnapshots:
    def __init__(self, *, session, context, config: dict):
        self.session, self.context, self.config = session, context, config
        self._repo: Snapshots | None = None
        self._start: str | None = None
        self._end: str | None = None

    async def start(self) -> dict:
        """Fields of the step-start part: the snapshot before the step (`{}` when snapshots are off)."""
        if self._repo is not None and self._end:
            self._start, self._end = self._end, None
            return {"snapshot": self._start}
        self._repo = self._start = self._end = None
        try:
            self._repo = await db(for_context)(self.context, self.config)
            self._start = await run(self._repo.track) if self._repo is not None else None
        except Exception:  # noqa: BLE001 — a snapshot failure must never fail the turn
            log.exception("snapshot before a step of %s", self.session.id)
            self._repo = self._start = None
        return {"snapshot": self._start} if self._start else {}

    async def finish(self) -> dict:
        """Fields of the step-finish part: the snapshot after the step."""
        try:
            self._end = await run(self._repo.track) if self._repo is not None else None
        except Exception:  # noqa: BLE001
            log.exception("snapshot after a step of %s", self.session.id)
            self._end = None
        return {"snapshot": self._end} if self._end else {}

    async def after(self, *, save_patch: Callable[[str, list], Awaitable[None]], user_message_id: str | None) -> None:
        """A `patch` part (written by `save_patch(hash, files)`) when the step changed files, then the
        session's summary, `session.diff` and the user message's summary.diffs."""
        from sessions_app.runtime.session_diff import summarize

        if self._repo is None or not self._start or not self._end:
            return
        try:
            patch = await run(self._repo.patch, self._start, self._end)
            if patch["files"]:
                await save_patch(patch["hash"], patch["files"])
            await db(summarize)(session=self.session, user_message_id=user_message_id, snaps=self._repo,
                                changed=bool(patch["files"]))
        except Exception:  # noqa: BLE001 — a summary failure must not fail the turn
            log.exception("session summary of %s", self.session.id)
