"""One model call as the usage records count it, made from the meter the provider layer filled in."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from agentserver import ids
from agentserver.clock import now_ms
from providers_app.pricing import cost_of
from providers_app.stream import CallMeter


@dataclass
class MeteredCall:
    """A model call from its start: whose, for what, and its meter. `ended(...)` makes its record once; a
    second ending (an abort arriving after the call was counted) makes none."""
    person_id: int
    session_id: str
    message_id: str
    agent: str
    purpose: str                  # usage_app.models.PURPOSES
    provider_id: str
    model_id: str
    meter: CallMeter = field(default_factory=CallMeter)
    call_id: str = field(default_factory=lambda: ids.ascending("cal"))
    started_ms: int = field(default_factory=now_ms)
    _started: float = field(default_factory=time.monotonic, init=False, repr=False)
    _ended: bool = field(default=False, init=False, repr=False)

    def in_flight(self) -> ModelCall:
        """The record of this call as its request goes out: nothing used yet (usage_app.store.record_start)."""
        meter = self.meter
        return ModelCall(
            call_id=self.call_id, started_ms=self.started_ms, person_id=self.person_id,
            session_id=self.session_id, message_id=self.message_id, agent=self.agent, purpose=self.purpose,
            provider_id=self.provider_id, model_id=self.model_id, input_tokens=0, output_tokens=0,
            reasoning_tokens=0, cache_read_tokens=0, cache_write_tokens=0, cost=0.0, priced=bool(meter.prices),
            usage_reported=False, credential=meter.credential or "none", duration_ms=0, outcome="in_flight")

    def ended(self, outcome: str, *, cost: float | None = None) -> ModelCall | None:
        """The record of this call, ending with `outcome`; None when it never reached the provider (no model
        or no key) or was counted already. `cost`: what the message shows, when it has it."""
        if self._ended or not self.meter.prepared:
            return None
        self._ended = True
        meter = self.meter
        priced = bool(meter.prices)
        if cost is None:
            cost = cost_of(meter.usage, meter.prices)
        return ModelCall(
            call_id=self.call_id, started_ms=self.started_ms, person_id=self.person_id,
            session_id=self.session_id, message_id=self.message_id, agent=self.agent, purpose=self.purpose,
            provider_id=self.provider_id, model_id=self.model_id, input_tokens=meter.usage.input,
            output_tokens=meter.usage.output, reasoning_tokens=meter.usage.reasoning,
            cache_read_tokens=meter.usage.cache_read, cache_write_tokens=meter.usage.cache_write,
            cost=float(cost) if priced else 0.0, priced=priced, usage_reported=meter.reported,
            credential=meter.credential or "none", duration_ms=int((time.monotonic() - self._started) * 1000),
            outcome=outcome)


@dataclass(frozen=True)
class ModelCall:
    call_id: str
    started_ms: int
    person_id: int
    session_id: str
    message_id: str
    agent: str
    purpose: str
    provider_id: str
    model_id: str
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    priced: bool
    usage_reported: bool
    credential: str
    duration_ms: int
    outcome: str
