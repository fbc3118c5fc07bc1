"""Normalized events of one model call, whatever the wire protocol. The runner consumes these."""
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

FinishReason = Literal["stop", "tool-calls", "length", "content-filter", "other"]


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def wire(self) -> dict:
        """The `tokens` object of assistant messages and step-finish parts (`total` as the reference sends it)."""
        total = self.input + self.output + self.reasoning + self.cache_read + self.cache_write
        return {"total": total, "input": self.input, "output": self.output, "reasoning": self.reasoning,
                "cache": {"read": self.cache_read, "write": self.cache_write}}


@dataclass
class CallMeter:
    """What one model call used, filled in while it runs, so that a call that failed or was cut half-way is
    counted with what it received (usage accounting reads it however the call ended)."""
    usage: Usage = field(default_factory=Usage)
    reported: bool = False        # the provider sent its usage (else the tokens are zero, and say so)
    prepared: bool = False        # the model and a credential were found: a request went to the provider
    credential: str = ""          # who pays: "account" | "config" | "server" | "none" (providers_app.credentials)
    prices: dict = field(default_factory=dict)  # the catalog's prices per million tokens; {} when it had none
    # Run on the database thread that prepares the call (one hand-off for all three): `admit` before the model
    # and credential are looked up (usage accounting's budget check, which refuses by raising), `on_request`
    # once they are found, before the request goes out (the call's in-flight record, so a worker's death
    # mid-call cannot lose it).
    admit: Callable[[], None] | None = field(default=None, repr=False)
    on_request: Callable[[], None] | None = field(default=None, repr=False)


@dataclass
class TextDelta:
    text: str


@dataclass
class ReasoningDelta:
    text: str
    # Anthropic thinking blocks end with a signature that must be replayed verbatim on the next call.
    signature: str | None = None


@dataclass
class ToolCallStart:
    id: str
    name: str


@dataclass
class ToolCallDelta:
    id: str
    delta: str


@dataclass
class ToolCallEnd:
    id: str
    name: str
    input: dict = field(default_factory=dict)


@dataclass
class Finish:
    reason: FinishReason
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0


StreamEvent = TextDelta | ReasoningDelta | ToolCallStart | ToolCallDelta | ToolCallEnd | Finish
