"""The turn slot rows (TurnSlot): each person's line of turns, a slot counting only while its session's lease
is live. runtime/turn_slots.py decides who runs; these are its reads and writes, run inside its transaction."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, Q

from agentserver.clock import DatabaseNow
from sessions_app.models import SessionLease, TurnSlot
from sessions_app.store.leases import live


def lock_owner(owner_id: int) -> None:
    """Lock the owner's user row: two hosts taking the owner's slots at once take turns."""
    list(get_user_model().objects.select_for_update().filter(pk=owner_id).values_list("pk", flat=True))


def drop_unheld(owner_id: int, *, keeping: str) -> None:
    """The owner's slots whose session holds no live lease go, but the slot of the session `keeping`."""
    held = Exists(SessionLease.objects.filter(live(), session_id=OuterRef("session_id")))
    TurnSlot.objects.filter(owner_id=owner_id).exclude(held).exclude(session_id=keeping).delete()


def join(*, session_id: str, owner_id: int) -> TurnSlot:
    """The session's slot, made at the end of the owner's line (by the database's clock) when it has none."""
    slot, created = TurnSlot.objects.get_or_create(session_id=session_id,
                                                   defaults={"owner_id": owner_id, "queued_at": DatabaseNow()})
    if created:  # the line's order is the database's clock, not a host's
        slot.refresh_from_db(fields=["queued_at"])
    return slot


def running_and_ahead(slot: TurnSlot) -> tuple[int, int]:
    """How many of the owner's other slots are granted, and how many wait before this one."""
    others = TurnSlot.objects.filter(owner_id=slot.owner_id).exclude(session_id=slot.session_id)
    running = others.filter(granted=True).count()
    ahead = others.filter(granted=False).filter(
        Q(queued_at__lt=slot.queued_at) | Q(queued_at=slot.queued_at, session_id__lt=slot.session_id)).count()
    return running, ahead


def grant(session_id: str) -> None:
    TurnSlot.objects.filter(session_id=session_id).update(granted=True)


def leave(session_id: str) -> None:
    TurnSlot.objects.filter(session_id=session_id).delete()
