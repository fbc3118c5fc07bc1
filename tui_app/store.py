"""The control queue's rows (TuiControlRequest), and the only code that touches them: tui_app/control.py says
what goes on a caller's queue, for how long, and who reads it."""
from __future__ import annotations

from django.db import transaction

from agentserver import ids
from tui_app.models import TuiControlRequest


def enqueue(user, *, path: str, body, dropping_before_ms: int, keeping: int) -> None:
    """A new request on the user's queue, in one transaction with dropping the requests made before
    `dropping_before_ms` and all but the newest `keeping`."""
    with transaction.atomic():
        TuiControlRequest.objects.filter(owner=user, time_created__lt=dropping_before_ms).delete()
        TuiControlRequest.objects.create(id=ids.ascending("tcr"), owner=user, path=path, body=body)
        stale = list(TuiControlRequest.objects.filter(owner=user).order_by("-id")
                     .values_list("id", flat=True)[keeping:])
        if stale:
            TuiControlRequest.objects.filter(id__in=stale).delete()


def claim_oldest_pending(user, *, made_since_ms: int) -> TuiControlRequest | None:
    """The user's oldest pending request made since `made_since_ms`, marked claimed."""
    with transaction.atomic():
        row = (TuiControlRequest.objects.select_for_update()
               .filter(owner=user, state="pending", time_created__gte=made_since_ms)
               .order_by("id").first())
        if row is not None:
            row.state = "claimed"
            row.save(update_fields=["state"])
        return row


def answer_oldest_claimed(user, *, response) -> bool:
    """Store `response` on the user's oldest claimed request, marked answered; False when there is none."""
    with transaction.atomic():
        row = (TuiControlRequest.objects.select_for_update().filter(owner=user, state="claimed")
               .order_by("id").first())
        if row is None:
            return False
        row.state = "answered"
        row.response = response
        row.save(update_fields=["state", "response"])
    return True
