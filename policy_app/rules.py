"""How the policies that apply to one person combine, and what they allow. Pure: no database.

A person is under everyone's policy and the policy of each of their groups. The strictest wins, field by
field, and each answer says which scope decided it (`Decided.by`, e.g. "policy of group 'contractors'"):

- providers: each scope that lists providers must list it (the intersection); none listed → any provider;
- models: a "provider/model" must match a pattern of each scope that lists patterns;
- MCP servers: each scope that restricts MCP must allowlist the server (a local command line starting with
  one of its commands, word by word; a remote URL starting with one of its URL prefixes at a boundary);
- permission ceilings: per permission, the strictest action any scope sets (deny > ask > allow);
- sharing: refused when any scope refuses it; allowed when one allows it and none refuses; else config decides;
- max steps: the smallest any scope sets;
- default model: the first, by group name, of the groups' default models that the merged model rules allow,
  else everyone's when allowed; a default model the merged rules refuse is never used."""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
EVERYONE = "policy of everyone"


@dataclass(frozen=True)
class Scope:
    """One Policy row as plain values."""
    name: str                                   # "policy of everyone", "policy of group 'contractors'"
    group: str | None = None
    allowed_providers: tuple[str, ...] = ()
    allowed_models: tuple[str, ...] = ()
    restrict_mcp: bool = False
    mcp_local_commands: tuple[str, ...] = ()
    mcp_remote_urls: tuple[str, ...] = ()
    permission_ceilings: dict = field(default_factory=dict)
    sharing_allowed: bool | None = None
    default_model: str = ""
    max_steps: int | None = None


@dataclass(frozen=True)
class Decided:
    value: object
    by: str                                     # the scope that decided it


def stricter(first: str, second: str | None) -> str:
    """The stricter of two actions (`second` None: `first`)."""
    if second is None or STRICTNESS.get(second, -1) <= STRICTNESS.get(first, -1):
        return first
    return second


def model_matches(pattern: str, provider_id: str, model_id: str) -> bool:
    return fnmatch.fnmatchcase(f"{provider_id}/{model_id}", pattern)


def _command_line(config: dict) -> list[str]:
    command = config.get("command")
    if isinstance(command, list):
        return [str(word) for word in command]
    if isinstance(command, str):
        return [command, *(str(word) for word in config.get("arguments") or [])]
    return []


def _local_allowed(config: dict, prefixes: tuple[str, ...]) -> bool:
    words = _command_line(config)
    return bool(words) and any(words[:len(p.split())] == p.split() for p in prefixes if p.split())


def _remote_allowed(config: dict, prefixes: tuple[str, ...]) -> bool:
    url = config.get("url")
    if not isinstance(url, str):
        return False
    for prefix in prefixes:
        if not prefix or not url.startswith(prefix):
            continue
        # "https://mcp.example.com" must not let in "https://mcp.example.com.evil.net/".
        if prefix.endswith("/") or len(url) == len(prefix) or url[len(prefix)] in "/?#":
            return True
    return False


def mcp_allowed_by(scope: Scope, config: dict) -> bool:
    if not scope.restrict_mcp:
        return True
    if config.get("type") == "remote" or "url" in config:
        return _remote_allowed(config, scope.mcp_remote_urls)
    return _local_allowed(config, scope.mcp_local_commands)


@dataclass(frozen=True)
class EffectivePolicy:
    scopes: tuple[Scope, ...] = ()

    @property
    def managed(self) -> bool:
        return bool(self.scopes)

    # ---- providers and models ----------------------------------------------------------------------

    def provider_refused_by(self, provider_id: str) -> str | None:
        for scope in self.scopes:
            if scope.allowed_providers and provider_id not in scope.allowed_providers:
                return scope.name
        return None

    def model_refused_by(self, provider_id: str, model_id: str) -> str | None:
        refused = self.provider_refused_by(provider_id)
        if refused:
            return refused
        for scope in self.scopes:
            if scope.allowed_models and not any(model_matches(p, provider_id, model_id)
                                                for p in scope.allowed_models):
                return scope.name
        return None

    def provider_possible(self, provider_id: str) -> bool:
        """Some model of this provider could be allowed (its id matches each scope's patterns' provider)."""
        if self.provider_refused_by(provider_id):
            return False
        return all(not s.allowed_models or any(fnmatch.fnmatchcase(provider_id, p.split("/", 1)[0])
                                               for p in s.allowed_models) for s in self.scopes)

    # ---- MCP ------------------------------------------------------------------------------------------

    def mcp_refused_by(self, config: dict) -> str | None:
        for scope in self.scopes:
            if not mcp_allowed_by(scope, config):
                return scope.name
        return None

    # ---- permissions ----------------------------------------------------------------------------------

    def ceiling(self, permission: str) -> Decided | None:
        """The strictest action any scope requires of `permission` (ceiling keys may use * wildcards)."""
        best: Decided | None = None
        for scope in self.scopes:
            for key, action in scope.permission_ceilings.items():
                if (action in STRICTNESS and fnmatch.fnmatchcase(permission, key)
                        and (best is None or STRICTNESS[action] > STRICTNESS[best.value])):
                    best = Decided(action, scope.name)
        return best

    def ceilings(self) -> dict[str, Decided]:
        """Every permission some scope names, with its strictest ceiling."""
        names = {key for scope in self.scopes for key in scope.permission_ceilings}
        out = {}
        for name in sorted(names):
            decided = None
            for scope in self.scopes:
                action = scope.permission_ceilings.get(name)
                if action in STRICTNESS and (decided is None or STRICTNESS[action] > STRICTNESS[decided.value]):
                    decided = Decided(action, scope.name)
            if decided is not None:
                out[name] = decided
        return out

    # ---- sharing, steps, default model ----------------------------------------------------------------

    def sharing(self) -> Decided | None:
        refusing = [s for s in self.scopes if s.sharing_allowed is False]
        if refusing:
            return Decided(False, refusing[0].name)
        allowing = [s for s in self.scopes if s.sharing_allowed is True]
        return Decided(True, allowing[0].name) if allowing else None

    def max_steps(self) -> Decided | None:
        limits = [s for s in self.scopes if s.max_steps]
        if not limits:
            return None
        scope = min(limits, key=lambda s: s.max_steps)
        return Decided(scope.max_steps, scope.name)

    def default_model(self) -> Decided | None:
        groups = sorted((s for s in self.scopes if s.group is not None), key=lambda s: s.group)
        everyone = [s for s in self.scopes if s.group is None]
        for scope in [*groups, *everyone]:
            ref = scope.default_model.split("/", 1) if scope.default_model else []
            if len(ref) == 2 and all(ref) and self.model_refused_by(ref[0], ref[1]) is None:
                return Decided(scope.default_model, scope.name)
        return None

    # ---- for people ------------------------------------------------------------------------------------

    def summary(self) -> list[dict]:
        """What applies, field by field: {setting, value, by} (by: the scopes that decided, joined)."""
        rows: list[dict] = []

        def by(scopes) -> str:
            return ", ".join(s.name for s in scopes)

        providers = [s for s in self.scopes if s.allowed_providers]
        if providers:
            allowed = set(providers[0].allowed_providers).intersection(*(s.allowed_providers for s in providers))
            rows.append({"setting": "Providers", "value": ", ".join(sorted(allowed)) or "none", "by": by(providers)})
        models = [s for s in self.scopes if s.allowed_models]
        if models:
            rows.append({"setting": "Models", "value": " and ".join(
                "(" + " or ".join(s.allowed_models) + ")" for s in models), "by": by(models)})
        mcp = [s for s in self.scopes if s.restrict_mcp]
        if mcp:
            value = " and ".join("(" + (" or ".join([*s.mcp_local_commands, *s.mcp_remote_urls]) or "none") + ")"
                                 for s in mcp)
            rows.append({"setting": "MCP servers allowed", "value": value, "by": by(mcp)})
        for name, decided in self.ceilings().items():
            rows.append({"setting": f"Permission {name}", "value": f"at least {decided.value}", "by": decided.by})
        for label, decided in (("Sharing sessions", self.sharing()), ("Most steps per turn", self.max_steps()),
                               ("Default model", self.default_model())):
            if decided is not None:
                value = ("allowed" if decided.value else "not allowed") if label == "Sharing sessions" else decided.value
                rows.append({"setting": label, "value": str(value), "by": decided.by})
        return rows
