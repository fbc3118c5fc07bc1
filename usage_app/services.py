"""Usage use cases: counting a model call (called by the runtime, inside the transaction of the step's end),
rolling old records up per day."""
from __future__ import annotations

from usage_app import store
from usage_app.calls import ModelCall


def do_record_call(*, call: ModelCall | None) -> None:
    """Count one model call. Runs in the caller's transaction: a step's call is stored with the step's end,
    so a crash leaves both or neither."""
    if call is not None:
        store.record_insert(call)
