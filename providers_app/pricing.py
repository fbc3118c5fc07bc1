"""What a model call costs. Its own module because both wire protocols price their final usage, and the
interface that picks a protocol (llm) sits above them."""
from __future__ import annotations

from providers_app.stream import Usage


def cost_of(usage: Usage, cost: dict) -> float:
    """USD for one call; catalog prices are per million tokens."""
    if not cost:
        return 0.0
    over = cost.get("context_over_200k")
    if isinstance(over, dict) and usage.input + usage.cache_read > 200_000:
        cost = {**cost, **over}
    total = (usage.input * float(cost.get("input") or 0)
             + (usage.output + usage.reasoning) * float(cost.get("output") or 0)
             + usage.cache_read * float(cost.get("cache_read") or 0)
             + usage.cache_write * float(cost.get("cache_write") or 0))
    return total / 1_000_000
