"""A fair share of the server: at most AGENTSERVER_MAX_TURNS_PER_PERSON turns of one person run at once, on
every worker and host together (0: no cap). A turn beyond it waits in its owner's line, in the order the turns
asked, with the session's status saying so (a `retry` status, which every opencode client shows with its
message), and starts when one of the owner's running turns ends.

The line is the TurnSlot table. Taking a slot is one transaction under a lock on the owner's row, so two hosts
cannot both grant the last one. A slot counts only while its session's lease is live: a worker that dies frees
its slots when its leases expire. A waiting turn is woken through the channel layer when one of its owner's
turns ends anywhere; a dead worker announces nothing, so it also looks again every LOOK_AGAIN_SECONDS.
Inline child sessions (a task call's subagent) run under their parent's slot and never take one."""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from agentserver import clock
from agentserver.workers.loop import db
from sessions_app.runtime import leases
from sessions_app.store import turn_slots as slots

LOOK_AGAIN_SECONDS = max(leases.LEASE_MS / 2000, 1.0)


@dataclass(frozen=True)
class Place:
    granted: bool
    running: int  # the owner's turns running now, this one not counted
    ahead: int    # the owner's turns waiting before this one


def cap() -> int:
    return max(int(getattr(settings, "MAX_TURNS_PER_PERSON", 0) or 0), 0)


def take(*, session_id: str, owner_id: int, limit: int) -> Place:
    """Join the owner's line (keeping an earlier place) and take a slot when fewer than `limit` of the owner's
    turns run and fewer than what is left wait before this one."""
    with transaction.atomic():
        slots.lock_owner(owner_id)
        slots.drop_unheld(owner_id, keeping=session_id)
        slot = slots.join(session_id=session_id, owner_id=owner_id)
        if slot.granted:
            return Place(granted=True, running=0, ahead=0)
        running, ahead = slots.running_and_ahead(slot)
        if running + ahead < limit:
            slots.grant(session_id)
            return Place(granted=True, running=running, ahead=ahead)
        return Place(granted=False, running=running, ahead=ahead)


def leave(session_id: str) -> None:
    slots.leave(session_id)


def _group(owner_id: int) -> str:
    return f"turn-slots.{owner_id}"


async def _announce_free(owner_id: int) -> None:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is not None:
        await layer.group_send(_group(owner_id), {"type": "turn.slot.free"})


def waiting_status(place: Place, limit: int) -> dict:
    ahead = f"; {place.ahead} of yours ahead of this one" if place.ahead else ""
    return {"type": "retry", "attempt": 0, "next": clock.now_ms() + int(LOOK_AGAIN_SECONDS * 1000),
            "message": f"Waiting for a free turn: {place.running} of your turns are running, the server's limit "
                       f"is {limit} at once{ahead}"}


@contextlib.asynccontextmanager
async def turn_slot(scope) -> AsyncIterator[bool]:
    """Hold one of the owner's slots for the turn; yields False when the turn was aborted while it waited."""
    limit = cap()
    if not limit or scope.session.parent_id is not None:
        yield True
        return
    session_id, owner_id = scope.session_id, scope.session.owner_id
    admitted = False
    try:
        admitted = await _wait_for_slot(scope, session_id, owner_id, limit)
        yield admitted
    finally:
        await db(leave)(session_id)
        if admitted:
            await _announce_free(owner_id)


async def _wait_for_slot(scope, session_id: str, owner_id: int, limit: int) -> bool:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel() if layer is not None else None
    if channel is not None:
        await layer.group_add(_group(owner_id), channel)  # before the first look: no end goes unheard
    try:
        while True:
            place = await db(take)(session_id=session_id, owner_id=owner_id, limit=limit)
            if place.granted:
                return True
            await scope.set_status(waiting_status(place, limit))
            if not await _until_woken(scope.abort_event, layer, channel):
                return False
    finally:
        if channel is not None:
            with contextlib.suppress(Exception):
                await layer.group_discard(_group(owner_id), channel)


async def _until_woken(abort_event: asyncio.Event, layer, channel) -> bool:
    """Until a turn of the owner ends (True), the fallback look (True) or an abort (False)."""
    waits = [asyncio.ensure_future(abort_event.wait())]
    if channel is not None:
        waits.append(asyncio.ensure_future(layer.receive(channel)))
    try:
        await asyncio.wait(waits, timeout=LOOK_AGAIN_SECONDS, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()
    return not abort_event.is_set()
