"""Reads made once per unit of work: one HTTP request, one step of a turn.

Some reads are asked for many times over in one unit of work and change only by an admin's hand: the
organization's policy for a person is read by the effective config, by every provider entry the step's
model call looks up, by the step's tool list and by each permission the step's tools ask. Inside a unit
(`unit()`) the first read is kept and the others reuse it (`remembered(key, read)`); outside any unit every
read goes to the database. A change therefore applies from the next request, or from the next step of a
running turn, as it would have anyway for a change made while a step ran."""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

# The current unit's reads; None outside a unit. Threads the unit's work runs on (agentserver.workers.loop
# copies the caller's context into them) share the unit's dict.
_reads: contextvars.ContextVar[dict | None] = contextvars.ContextVar("read_once", default=None)


@contextlib.contextmanager
def unit() -> Iterator[None]:
    """A unit of work: reads remembered inside it are made once."""
    token = _reads.set({})
    try:
        yield
    finally:
        _reads.reset(token)


def remembered(key: Any, read: Callable[[], T]) -> T:
    """`read()`, made once per unit of work and `key` (every time outside a unit)."""
    reads = _reads.get()
    if reads is None:
        return read()
    try:
        return reads[key]
    except KeyError:
        value = reads[key] = read()
        return value
