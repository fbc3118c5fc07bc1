"""The policy as the last layer of the effective opencode config, and the check that refuses a config change
(PATCH /config on both mounts, PATCH /global/config) that would reach past it.

The layer keeps what a person's, a project's and a session's config may not change within the policy:
providers and custom providers not allowed are dropped, `model`/`small_model` are the policy's or dropped
when refused, permissions (top level, each agent's, legacy `tools` maps) are raised to their ceilings,
sharing is "disabled" when refused, MCP servers not allowlisted are disabled, agents' steps are capped. The
runtime applies the same policy again where it decides (docs/policy.md): the config shows it, it does not
carry it alone."""
from __future__ import annotations

import copy

from agentserver.errors import PolicyError
from policy_app.rules import STRICTNESS, EffectivePolicy, stricter

EDIT_TOOL_IDS = ("edit", "write", "patch", "multiedit", "apply_patch")


def _permission_of_tool(tool_id: str) -> str:
    return "edit" if tool_id in EDIT_TOOL_IDS else tool_id


# ---- the layer -------------------------------------------------------------------------------------------

def apply_policy(config: dict, policy: EffectivePolicy) -> dict:
    """`config` (changed in place and returned) as the policy lets it be."""
    if not policy.managed:
        return config
    _providers(config, policy)
    _models(config, policy)
    ceilings = policy.ceilings()
    if ceilings:
        if "permission" in config:
            config["permission"] = capped_permission(config["permission"], policy)
        _cap_tools(config, policy)
    for section in ("agent", "mode"):
        agents = config.get(section)
        if isinstance(agents, dict):
            for agent in agents.values():
                if isinstance(agent, dict):
                    _agent(agent, policy, ceilings)
    sharing = policy.sharing()
    if sharing is not None and sharing.value is False:
        config["share"] = "disabled"
    mcp = config.get("mcp")
    if isinstance(mcp, dict):
        for name, entry in list(mcp.items()):
            if isinstance(entry, dict) and policy.mcp_refused_by(entry):
                mcp[name] = {**entry, "enabled": False}
    return config


def _providers(config: dict, policy: EffectivePolicy) -> None:
    listed = [s.allowed_providers for s in policy.scopes if s.allowed_providers]
    if listed:
        allowed = set(listed[0]).intersection(*listed)
        enabled = config.get("enabled_providers")
        keep = [p for p in enabled if p in allowed] if isinstance(enabled, list) else sorted(allowed)
        config["enabled_providers"] = keep
    providers = config.get("provider")
    if isinstance(providers, dict):
        config["provider"] = {k: v for k, v in providers.items() if policy.provider_possible(k)}


def _refused_ref(value, policy: EffectivePolicy) -> bool:
    if not isinstance(value, str) or "/" not in value:
        return False
    provider_id, model_id = value.split("/", 1)
    return policy.model_refused_by(provider_id, model_id) is not None


def _models(config: dict, policy: EffectivePolicy) -> None:
    default = policy.default_model()
    if default is not None:
        config["model"] = default.value
    elif _refused_ref(config.get("model"), policy):
        config.pop("model")
    if _refused_ref(config.get("small_model"), policy):
        config.pop("small_model")


def capped_permission(permission, policy: EffectivePolicy) -> dict | str:
    """A `permission` config whose rules for a capped permission are raised to its ceiling, in place. Nothing
    is added or moved: a rule added here would come after a built-in agent's own (plan's `edit: deny`) and
    loosen it, and a rule moved last could outrank a stricter one. The runtime applies the ceilings after every
    rule anyway (sessions_app/runtime/asking.py)."""
    if isinstance(permission, str):
        decided = policy.ceiling("*")
        return stricter(permission, decided.value) if decided and permission in STRICTNESS else permission
    if not isinstance(permission, dict):
        return permission
    out = copy.deepcopy(permission)
    for key, value in out.items():
        decided = policy.ceiling(str(key))
        if decided is None:
            continue
        if isinstance(value, dict):
            out[key] = {pattern: stricter(action, decided.value) if action in STRICTNESS else action
                        for pattern, action in value.items()}
        elif value in STRICTNESS:
            out[key] = stricter(value, decided.value)
    return out


def _cap_tools(holder: dict, policy: EffectivePolicy) -> None:
    tools = holder.get("tools")
    if not isinstance(tools, dict):
        return
    for tool_id, enabled in list(tools.items()):
        decided = policy.ceiling(_permission_of_tool(str(tool_id)))
        if decided is None or enabled is not True:
            continue
        if decided.value == "deny":
            tools[tool_id] = False
        elif decided.value == "ask":
            tools.pop(tool_id)  # `true` would be an allow rule


def _agent(agent: dict, policy: EffectivePolicy, ceilings: dict) -> None:
    if ceilings:
        if "permission" in agent:
            agent["permission"] = capped_permission(agent["permission"], policy)
        _cap_tools(agent, policy)
    if _refused_ref(agent.get("model"), policy):
        agent.pop("model")
    limit = policy.max_steps()
    if limit is not None:
        for key in ("steps", "maxSteps"):
            if isinstance(agent.get(key), int) and agent[key] > limit.value:
                agent[key] = limit.value


# ---- refusing a config change ----------------------------------------------------------------------------

def check_config_patch(patch: dict, policy: EffectivePolicy) -> None:
    """PolicyError for the first setting of `patch` the policy refuses; a patch within it passes."""
    if not policy.managed or not isinstance(patch, dict):
        return
    _check_providers(patch, policy)
    for key in ("model", "small_model"):
        _check_model(patch.get(key), policy, key)
    _check_permissions(patch, policy, "")
    for section in ("agent", "mode"):
        agents = patch.get(section)
        if isinstance(agents, dict):
            for name, agent in agents.items():
                if isinstance(agent, dict):
                    where = f"{section}.{name}."
                    _check_permissions(agent, policy, where)
                    _check_model(agent.get("model"), policy, where + "model")
                    _check_steps(agent, policy, where)
    sharing = policy.sharing()
    if sharing is not None and sharing.value is False and patch.get("share") in ("auto", "manual"):
        raise PolicyError(f'Sharing sessions is not allowed by the {sharing.by}', policy=sharing.by, field="share")
    mcp = patch.get("mcp")
    if isinstance(mcp, dict):
        for name, entry in mcp.items():
            if isinstance(entry, dict) and entry.get("enabled") is not False:
                refused = policy.mcp_refused_by(entry)
                if refused:
                    raise mcp_refusal(name, refused)


def mcp_refusal(name: str, by: str) -> PolicyError:
    return PolicyError(f"MCP server {name} is not on the MCP allowlist of the {by}", policy=by, field="mcp",
                       server=name)


def model_refusal(provider_id: str, model_id: str, by: str) -> PolicyError:
    return PolicyError(f"Model {provider_id}/{model_id} is not allowed by the {by}", policy=by, field="models",
                       providerID=provider_id, modelID=model_id)


def _check_providers(patch: dict, policy: EffectivePolicy) -> None:
    named = [p for p in patch.get("enabled_providers") or [] if isinstance(p, str)] \
        if isinstance(patch.get("enabled_providers"), list) else []
    providers = patch.get("provider")
    named += [p for p, entry in providers.items() if entry is not None] if isinstance(providers, dict) else []
    for provider_id in named:
        refused = policy.provider_refused_by(provider_id)
        if refused is None and not policy.provider_possible(provider_id):
            refused = next(s.name for s in policy.scopes if s.allowed_models)
        if refused:
            raise PolicyError(f"Provider {provider_id} is not allowed by the {refused}", policy=refused,
                              field="providers", providerID=provider_id)


def _check_model(value, policy: EffectivePolicy, where: str) -> None:
    if isinstance(value, str) and "/" in value:
        provider_id, model_id = value.split("/", 1)
        refused = policy.model_refused_by(provider_id, model_id)
        if refused:
            raise model_refusal(provider_id, model_id, refused)


def _below(action, permission: str, policy: EffectivePolicy):
    decided = policy.ceiling(permission)
    if decided is not None and action in STRICTNESS and STRICTNESS[action] < STRICTNESS[decided.value]:
        return decided
    return None


def ceiling_refusal(permission: str, action: str, by: str, ceiling: str) -> PolicyError:
    return PolicyError(f"Permission {permission} may not be {action}: the {by} requires at least {ceiling}",
                       policy=by, field="permission_ceilings", permission=permission, ceiling=ceiling)


def _check_permissions(holder: dict, policy: EffectivePolicy, where: str) -> None:
    permission = holder.get("permission")
    if isinstance(permission, str):
        permission = {"*": permission}
    if isinstance(permission, dict):
        for key, value in permission.items():
            actions = value.values() if isinstance(value, dict) else [value]
            for action in actions:
                decided = _below(action, str(key), policy)
                if decided:
                    raise ceiling_refusal(str(key), action, decided.by, decided.value)
    tools = holder.get("tools")
    if isinstance(tools, dict):
        check_tools(tools, policy)


def check_tools(tools: dict, policy: EffectivePolicy) -> None:
    """A `tools` map (a prompt's, an agent's): turning on a tool whose permission has an ask or deny ceiling
    would allow it outright."""
    for tool_id, enabled in tools.items():
        if enabled is True:
            permission = _permission_of_tool(str(tool_id))
            decided = _below("allow", permission, policy)
            if decided:
                raise ceiling_refusal(permission, "allow", decided.by, decided.value)


def check_rules(rules, policy: EffectivePolicy) -> None:
    """Session permission rules ({permission, pattern, action}, as session.create / update take them)."""
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, dict) and isinstance(rule.get("permission"), str):
            decided = _below(rule.get("action"), rule["permission"], policy)
            if decided:
                raise ceiling_refusal(rule["permission"], rule["action"], decided.by, decided.value)


def _check_steps(agent: dict, policy: EffectivePolicy, where: str) -> None:
    limit = policy.max_steps()
    for key in ("steps", "maxSteps"):
        value = agent.get(key)
        if limit is not None and isinstance(value, int) and value > limit.value:
            raise PolicyError(f"{where}{key} {value} is more than the {limit.value} steps the {limit.by} allows",
                              policy=limit.by, field="max_steps")
