"""The snapshots of one step (reference §5.2 step 10): the tree before and after it on its step-start and
step-finish parts, then a `patch` part and the session's diff summary when it changed files.

Each hook returns quickly when snapshots are off; git runs in a worker thread (runtime/snapshots.py `run`),
the ORM in the runner's thread. The step keeps the state in its `snapshot_state` dict."""
from __future__ import annotations

import logging

from agentserver.loop import db
from sessions_app.runtime.snapshots import for_context, run

log = logging.getLogger(__name__)


async def step_start(processor) -> dict:
    """Fields of the step-start part: the snapshot before the step (`{}` when snapshots are off)."""
    step = processor.step
    state = processor.snapshot_state
    state.clear()
    try:
        snaps = await db(for_context)(step.context, step.config)
        state["repo"] = snaps
        state["start"] = await run(snaps.track) if snaps is not None else None
    except Exception:  # noqa: BLE001 — a snapshot failure must never fail the turn
        log.exception("snapshot before a step of %s", processor.session.id)
        state.clear()
    return {"snapshot": state["start"]} if state.get("start") else {}


async def step_finish(processor) -> dict:
    """Fields of the step-finish part: the snapshot after the step."""
    state = processor.snapshot_state
    snaps = state.get("repo")
    try:
        state["end"] = await run(snaps.track) if snaps is not None else None
    except Exception:  # noqa: BLE001
        log.exception("snapshot after a step of %s", processor.session.id)
        state["end"] = None
    return {"snapshot": state["end"]} if state["end"] else {}


async def after_step(processor) -> None:
    """A `patch` part when the step changed files, then the session's summary, `session.diff` and the user
    message's summary.diffs."""
    from sessions_app.runtime.session_diff import summarize

    state = processor.snapshot_state
    snaps, start, end = state.get("repo"), state.get("start"), state.get("end")
    if snaps is None or not start or not end:
        return
    try:
        patch = await run(snaps.patch, start, end)
        if patch["files"]:
            await processor.save(processor.new_part("patch", hash=patch["hash"], files=patch["files"]))
        await db(summarize)(session=processor.session, user_message_id=processor.info.get("parentID"),
                            snaps=snaps, changed=bool(patch["files"]))
    except Exception:  # noqa: BLE001 — a summary failure must not fail the turn
        log.exception("session summary of %s", processor.session.id)
