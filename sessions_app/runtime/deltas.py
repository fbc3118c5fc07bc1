"""Coalescing of streamed text deltas into fewer message.part.delta events.

Each event goes to every subscriber, and a fast model can stream thousands of tiny deltas: merging the ones
that arrive within DELTA_FLUSH_SECONDS keeps the event stream proportional to time, not to tokens."""
from __future__ import annotations

import asyncio
from typing import Callable

DELTA_FLUSH_SECONDS = 0.01


class DeltaBuffer:
    """Coalesces the text deltas of one part into one message.part.delta (the concatenated text) when they
    arrive faster than one per DELTA_FLUSH_SECONDS. A delta after a quiet spell goes out as soon as the
    step yields to the loop (no added latency for a model streaming slower than that); a burst goes out
    at most once per window, so 5,000 back-to-back deltas cost a few hundred events to every subscriber, not
    5,000. The step flushes before each of its part writes: a part's deltas always precede its next
    message.part.updated, and they still concatenate to the final text exactly."""

    def __init__(self, emit: Callable[[dict, str], None]):
        self._emit = emit
        self._part: dict | None = None
        self._chunks: list[str] = []
        self._handle: asyncio.TimerHandle | None = None
        self._last_flush = float("-inf")  # loop time

    def add(self, part: dict, text: str) -> None:
        if self._part is not None and self._part["id"] != part["id"]:
            self.flush()
        self._part = part
        self._chunks.append(text)
        if self._handle is None:
            loop = asyncio.get_running_loop()
            self._handle = loop.call_at(max(loop.time(), self._last_flush + DELTA_FLUSH_SECONDS), self.flush)

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._chunks:
            part, text = self._part, "".join(self._chunks)
            self._chunks = []
            self._last_flush = asyncio.get_running_loop().time()
            self._emit(part, text)
