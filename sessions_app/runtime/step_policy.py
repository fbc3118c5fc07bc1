"""The organization's policy (policy_app) as each step of a turn reads it: a policy changed while a session
runs applies from its next step on. The model must still be allowed, tools whose permission the policy
denies are not offered, and the step limit is the smaller of the agent's and the policy's."""
from __future__ import annotations

from dataclasses import dataclass

from agentserver.errors import PolicyError
from policy_app.config_layer import model_refusal
from policy_app.rules import EffectivePolicy
from policy_app.selectors import policy_for_user_id
from sessions_app.runtime.permission_rules import EDIT_TOOLS


@dataclass(frozen=True)
class StepPolicy:
    tools: dict
    max_steps: float
    refusal: PolicyError | None = None


def step_policy(*, owner_id: int, tools: dict, max_steps: float, model: dict) -> StepPolicy:
    policy = policy_for_user_id(owner_id)
    if not policy.managed:
        return StepPolicy(tools=tools, max_steps=max_steps)
    provider_id, model_id = model.get("providerID"), model.get("modelID")
    if provider_id and model_id:
        refused = policy.model_refused_by(provider_id, model_id)
        if refused:
            return StepPolicy(tools={}, max_steps=max_steps, refusal=model_refusal(provider_id, model_id, refused))
    limit = policy.max_steps()
    return StepPolicy(tools=allowed_tools(tools, policy),
                      max_steps=min(max_steps, limit.value) if limit is not None else max_steps)


def allowed_tools(tools: dict, policy: EffectivePolicy) -> dict:
    """The tools whose permission the policy does not deny outright (`invalid` stays: it answers the model)."""
    def denied(tool_id: str) -> bool:
        decided = policy.ceiling("edit" if tool_id in EDIT_TOOLS else tool_id)
        return decided is not None and decided.value == "deny"

    return {tool_id: tool for tool_id, tool in tools.items() if tool_id == "invalid" or not denied(tool_id)}
