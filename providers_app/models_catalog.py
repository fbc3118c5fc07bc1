"""The providers and models a runtime context sees: the catalog overlaid by the `provider` section of the
effective config (custom providers with `options.baseURL`, extra or changed models, whitelist/blacklist),
filtered by `enabled_providers` / `disabled_providers`, each marked connected when it has a credential.

Public: `provider_entries(context)`, `resolve_model(...)`, `default_model(...)`, `small_model(...)`,
`parse_model_ref("provider/model")`."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from agentserver.errors import BadRequest
from auth_app.accounts import has_active_account, services_with_active_account
from policy_app.rules import EffectivePolicy
from policy_app.selectors import policy_for
from projects_app.config import effective_config
from providers_app import catalog, credentials

DEFAULT_NPM = "@ai-sdk/openai-compatible"
# Packages of the catalog whose endpoint the catalog does not give but which speak chat-completions.
OPENAI_COMPATIBLE_URLS = {
    "@ai-sdk/openai": "https://api.openai.com/v1",
    "@ai-sdk/groq": "https://api.groq.com/openai/v1",
    "@ai-sdk/mistral": "https://api.mistral.ai/v1",
    "@ai-sdk/xai": "https://api.x.ai/v1",
    "@ai-sdk/deepinfra": "https://api.deepinfra.com/v1/openai",
    "@ai-sdk/togetherai": "https://api.together.xyz/v1",
    "@ai-sdk/cerebras": "https://api.cerebras.ai/v1",
    "@ai-sdk/perplexity": "https://api.perplexity.ai",
    "@ai-sdk/google": "https://generativelanguage.googleapis.com/v1beta/openai",
    "@openrouter/ai-sdk-provider": "https://openrouter.ai/api/v1",
    "@ai-sdk/anthropic": "https://api.anthropic.com/v1",
}
DEFAULT_LIMIT = {"context": 128000, "output": 4096}
MODEL_PRIORITY = ("gpt-5", "claude-sonnet-4", "gemini-3-pro", "gemini-2.5-pro", "big-pickle")
SMALL_PRIORITY = ("claude-haiku-4-5", "claude-3-5-haiku", "gemini-2.5-flash", "gpt-5-nano", "gpt-5-mini",
                  "gpt-4o-mini", "gpt-4.1-mini")
PROVIDER_PRIORITY = ("anthropic", "openai", "google", "openrouter", "opencode")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class ProviderEntry:
    record: dict                 # spec shape {id, name, env, models, api?, npm?}; never holds secrets
    options: dict                # the config's provider options (may hold apiKey: never render raw)
    source: str                  # "env" | "config" | "custom" | "api" (internal shape's `source`)
    custom: bool                 # defined only by config, not in the catalog
    connected: bool = False
    account: bool = False        # an active auth account exists for it
    api_ids: dict = field(default_factory=dict)  # model key → API model id, when config maps one


@dataclass(frozen=True)
class ModelInfo:
    provider_id: str
    model_id: str
    api_model_id: str            # what is sent as `model` (config may map a key to another API id)
    protocol: str                # "openai" | "anthropic"
    npm: str
    base_url: str | None
    model: dict                  # spec-shape model record
    provider: dict = field(repr=False, default_factory=dict)  # spec-shape provider record
    options: dict = field(repr=False, default_factory=dict)   # provider options ⊕ model options (secrets!)
    headers: dict = field(default_factory=dict)

    @property
    def limit(self) -> dict:
        return self.model.get("limit") or {}

    @property
    def cost(self) -> dict:
        return self.model.get("cost") or {}


def active_account_services(user) -> set[str]:
    """Services with an active auth account, in one query (credentials are decrypted only when used)."""
    return services_with_active_account(user=user)


def _merged_model(model_id: str, base: dict | None, override: dict) -> dict:
    raw = dict(base or {})
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(raw.get(key), dict):
            raw[key] = {**raw[key], **value}
        else:
            raw[key] = value
    if base is None:
        raw.setdefault("tool_call", True)
        raw.setdefault("limit", DEFAULT_LIMIT)
    raw.pop("id", None)
    return catalog.normalize_model(model_id, raw)


def _overlay(provider_id: str, base: dict | None, cfg: dict) -> dict:
    record = {"id": provider_id, "name": provider_id, "env": [], "models": {}} if base is None else dict(base)
    if isinstance(cfg.get("name"), str):
        record["name"] = cfg["name"]
    if isinstance(cfg.get("env"), list):
        record["env"] = [e for e in cfg["env"] if isinstance(e, str)]
    for key in ("api", "npm"):
        if isinstance(cfg.get(key), str):
            record[key] = cfg[key]
    if base is None and "npm" not in record:
        record["npm"] = DEFAULT_NPM
    models = dict(record.get("models") or {})
    for model_id, override in (cfg.get("models") or {}).items():
        if isinstance(override, dict):
            models[model_id] = _merged_model(model_id, models.get(model_id), override)
    whitelist, blacklist = cfg.get("whitelist"), cfg.get("blacklist")
    if isinstance(whitelist, list):
        models = {k: v for k, v in models.items() if k in whitelist}
    if isinstance(blacklist, list):
        models = {k: v for k, v in models.items() if k not in blacklist}
    record["models"] = models
    return record


def provider_entries(context, *, config: dict | None = None) -> dict[str, ProviderEntry]:
    """All providers this context may use, keyed by id (catalog order, then config-only ones)."""
    config = effective_config(context) if config is None else config
    provider_cfg = _provider_config(config)
    base = catalog.catalog()
    accounts = active_account_services(context.user)
    policy = policy_for(context.user)
    entries = {provider_id: _entry(provider_id, base, provider_cfg, has_account=provider_id in accounts)
               for provider_id in [*base, *(p for p in provider_cfg if p not in base)]
               if _allowed(config, provider_id) and policy.provider_possible(provider_id)}
    return {k: _within(v, policy) for k, v in entries.items()}


def provider_entry(context, provider_id: str, *, config: dict | None = None,
                   accounts: bool = True) -> ProviderEntry | None:
    """One provider of `provider_entries`, built alone: a model call needs only its own, and building every
    provider of the catalog was a tenth of a prompt's CPU. `accounts=False`: for a caller that reads only the
    record and options (a model's limits, a call's endpoint), the user's auth accounts are not looked up,
    and `connected`, `source` and `account` leave them out."""
    config = effective_config(context) if config is None else config
    provider_cfg = _provider_config(config)
    base = catalog.catalog()
    if provider_id not in base and provider_id not in provider_cfg or not _allowed(config, provider_id):
        return None
    policy = policy_for(context.user)
    if not policy.provider_possible(provider_id):
        return None
    has_account = accounts and has_active_account(user=context.user, service_id=provider_id)
    return _within(_entry(provider_id, base, provider_cfg, has_account=has_account), policy)


def _within(entry: ProviderEntry, policy: EffectivePolicy) -> ProviderEntry:
    """The entry with only the models the organization's policy allows (the catalog's record is shared: a
    new record when any is dropped)."""
    if not policy.managed:
        return entry
    provider_id = entry.record["id"]
    models = entry.record.get("models") or {}
    kept = {k: v for k, v in models.items() if policy.model_refused_by(provider_id, k) is None}
    if len(kept) != len(models):
        entry.record = {**entry.record, "models": kept}
    return entry


def _provider_config(config: dict) -> dict:
    return config.get("provider") if isinstance(config.get("provider"), dict) else {}


def _allowed(config: dict, provider_id: str) -> bool:
    enabled = config.get("enabled_providers")
    disabled = config.get("disabled_providers")
    return ((not isinstance(enabled, list) or provider_id in enabled)
            and (not isinstance(disabled, list) or provider_id not in disabled))


def _entry(provider_id: str, base: dict, provider_cfg: dict, *, has_account: bool) -> ProviderEntry:
    cfg = provider_cfg.get(provider_id)
    cfg = cfg if isinstance(cfg, dict) else None
    record = base.get(provider_id) if cfg is None else _overlay(provider_id, base.get(provider_id), cfg)
    options = cfg.get("options") if cfg and isinstance(cfg.get("options"), dict) else {}
    custom = provider_id not in base
    has_env = credentials.env_credential(record.get("env") or []) is not None
    has_key = credentials.config_credential(options) is not None
    # A config-only endpoint with a baseURL (Ollama, vLLM, LM Studio…) needs no key to be usable.
    keyless = custom and bool(options.get("baseURL"))
    source = "api" if has_account else "env" if has_env else "config" if cfg is not None else "custom"
    return ProviderEntry(
        record=record, options=options, source=source, custom=custom,
        connected=has_account or has_env or has_key or keyless, account=has_account,
        api_ids={k: v["id"] for k, v in ((cfg or {}).get("models") or {}).items()
                 if isinstance(v, dict) and isinstance(v.get("id"), str) and v["id"]},
    )


def _rank(model_id: str, priority: tuple[str, ...]) -> int:
    for index, prefix in enumerate(priority):
        if prefix in model_id:
            return index
    return len(priority)


def can_chat(model: dict) -> bool:
    """Takes and writes text and calls tools: what an agent's turn needs (not transcription, images, video)."""
    modalities = model.get("modalities") if isinstance(model.get("modalities"), dict) else {}
    return (bool(model.get("tool_call")) and "text" in (modalities.get("input") or ["text"])
            and "text" in (modalities.get("output") or ["text"]))


def best_model(record: dict, priority: tuple[str, ...] = MODEL_PRIORITY) -> str | None:
    """The provider's default: among models that can chat when it has any (then not deprecated ones)."""
    models = list(record.get("models", {}).values())
    models = [m for m in models if can_chat(m)] or models
    models = [m for m in models if m.get("status") != "deprecated"] or models
    if not models:
        return None
    # Lowest priority rank first; then "latest" aliases; then the highest id (newest versions sort last).
    models.sort(key=lambda m: m["id"], reverse=True)
    models.sort(key=lambda m: (_rank(m["id"], priority), 0 if "latest" in m["id"] else 1))
    return models[0]["id"]


def default_map(entries: dict[str, ProviderEntry]) -> dict[str, str]:
    out = {}
    for provider_id, entry in entries.items():
        best = best_model(entry.record)
        if best:
            out[provider_id] = best
    return out


def parse_model_ref(value: str) -> tuple[str, str] | None:
    if not isinstance(value, str) or "/" not in value:
        return None
    provider_id, model_id = value.split("/", 1)
    return (provider_id, model_id) if provider_id and model_id else None


def _expand_env(url: str | None) -> str | None:
    if not url:
        return url
    return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), m.group(0)), url)


def model_info(entry: ProviderEntry, model_id: str) -> ModelInfo:
    record, model = entry.record, entry.record["models"][model_id]
    model_provider = model.get("provider") if isinstance(model.get("provider"), dict) else {}
    npm = model_provider.get("npm") or record.get("npm") or DEFAULT_NPM
    protocol = "anthropic" if "anthropic" in npm else "openai"
    base_url = (entry.options.get("baseURL") or model_provider.get("api") or record.get("api")
                or OPENAI_COMPATIBLE_URLS.get(npm))
    headers = {**(entry.options.get("headers") or {}), **(model.get("headers") or {})}
    return ModelInfo(
        provider_id=record["id"], model_id=model_id, api_model_id=_api_id(entry, model_id), protocol=protocol,
        npm=npm, base_url=_expand_env(base_url), model=model, provider={k: v for k, v in record.items()
                                                                         if k != "models"},
        options={**entry.options, **(model.get("options") or {})},
        headers={str(k): str(v) for k, v in headers.items()},
    )


def _api_id(entry: ProviderEntry, model_id: str) -> str:
    return entry.api_ids.get(model_id) or model_id


def resolve_model(*, context, provider_id: str, model_id: str, config: dict | None = None,
                  entries: dict[str, ProviderEntry] | None = None) -> ModelInfo:
    """The model a call will use; BadRequest for a pair this context does not know."""
    entry = (provider_entry(context, provider_id, config=config, accounts=False) if entries is None
             else entries.get(provider_id))
    if entry is None or model_id not in entry.record.get("models", {}):
        raise BadRequest(f"Model not found: {provider_id}/{model_id}", kind="Body",
                         providerID=provider_id, modelID=model_id)
    return model_info(entry, model_id)


def _first_connected(entries: dict[str, ProviderEntry]) -> ProviderEntry | None:
    connected = [e for e in entries.values() if e.connected and e.record.get("models")]
    if not connected:
        return None
    connected.sort(key=lambda e: (0 if e.custom else 1, _rank(e.record["id"], PROVIDER_PRIORITY)))
    return connected[0]


def default_model(*, context, config: dict | None = None) -> tuple[str, str]:
    """`model` from config when it names a known model, else the best model of the first connected provider."""
    config = effective_config(context) if config is None else config
    entries = provider_entries(context, config=config)
    ref = parse_model_ref(config.get("model"))
    if ref and ref[0] in entries and ref[1] in entries[ref[0]].record.get("models", {}):
        return ref
    entry = _first_connected(entries)
    if entry is None:
        if ref:
            raise BadRequest(f"Model not found: {ref[0]}/{ref[1]}", kind="Body")
        raise BadRequest("No model available: connect a provider or set `model` in the config", kind="Body")
    return entry.record["id"], best_model(entry.record)


def small_model(*, context, config: dict | None = None) -> tuple[str, str]:
    """`small_model` from config, else a small model of the default model's provider, else the default model."""
    config = effective_config(context) if config is None else config
    entries = provider_entries(context, config=config)
    ref = parse_model_ref(config.get("small_model"))
    if ref and ref[0] in entries and ref[1] in entries[ref[0]].record.get("models", {}):
        return ref
    provider_id, model_id = default_model(context=context, config=config)
    models = entries[provider_id].record["models"]
    small = [m for m in models if _rank(m, SMALL_PRIORITY) < len(SMALL_PRIORITY)]
    if small:
        small.sort(reverse=True)
        small.sort(key=lambda m: _rank(m, SMALL_PRIORITY))
        return provider_id, small[0]
    return provider_id, model_id
