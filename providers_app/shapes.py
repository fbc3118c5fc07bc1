"""Wire renderings of providers and models. Four shapes exist (reference §3.8 and the 1.18 transcripts):
the models.dev shape (`GET /provider`, the catalog), the internal shape with `capabilities` (`GET /config/
providers`, read by opencode's clients), and the v2 ProviderV2Info / ModelV2Info shapes (`/api/provider`,
`/api/model`). None of them ever carries a credential: secret-looking option and header keys are dropped."""
from __future__ import annotations

import datetime
import re

from providers_app.models_catalog import ProviderEntry

MODALITIES = ("text", "audio", "image", "video", "pdf")
_SECRET = re.compile(r"(api[-_]?key|token|secret|password|credential|authorization|cookie)", re.IGNORECASE)


def without_secrets(value):
    """A copy without secret-looking keys, at any depth."""
    if isinstance(value, dict):
        return {k: without_secrets(v) for k, v in value.items() if not _SECRET.search(str(k))}
    if isinstance(value, list):
        return [without_secrets(v) for v in value]
    return value


def _clean_model(model: dict) -> dict:
    if not model.get("options") and not model.get("headers"):
        return model  # catalog records: nothing to clean, avoid copying thousands of dicts
    out = dict(model)
    out["options"] = without_secrets(model.get("options") or {})
    if "headers" in model:
        out["headers"] = without_secrets(model["headers"])
    return out


def provider_seed(entry: ProviderEntry) -> dict:
    """models.dev shape: {id, name, env, models, api?, npm?}."""
    record = entry.record
    out = {k: v for k, v in record.items() if k != "models"}
    out["models"] = {model_id: _clean_model(model) for model_id, model in record.get("models", {}).items()}
    return out


def _modalities(model: dict, side: str) -> dict:
    values = (model.get("modalities") or {}).get(side) or ["text"]
    return {name: name in values for name in MODALITIES}


def _status(model: dict) -> str:
    return model.get("status") or "active"


def _api_url(entry: ProviderEntry, model: dict) -> str:
    provider = model.get("provider") if isinstance(model.get("provider"), dict) else {}
    return provider.get("api") or entry.record.get("api") or ""


def _npm(entry: ProviderEntry, model: dict) -> str:
    provider = model.get("provider") if isinstance(model.get("provider"), dict) else {}
    return provider.get("npm") or entry.record.get("npm") or "@ai-sdk/openai-compatible"


def model_internal(entry: ProviderEntry, model: dict) -> dict:
    cost = model.get("cost") or {}
    out_cost = {"input": cost.get("input", 0), "output": cost.get("output", 0),
                "cache": {"read": cost.get("cache_read", 0), "write": cost.get("cache_write", 0)}}
    over = cost.get("context_over_200k")
    if isinstance(over, dict):
        out_cost["experimentalOver200K"] = {
            "input": over.get("input", 0), "output": over.get("output", 0),
            "cache": {"read": over.get("cache_read", 0), "write": over.get("cache_write", 0)}}
    out = {
        "id": model["id"],
        "providerID": entry.record["id"],
        "api": {"id": entry.api_ids.get(model["id"], model["id"]), "url": _api_url(entry, model),
                "npm": _npm(entry, model)},
        "name": model["name"],
        "family": model.get("family", ""),
        "capabilities": {
            "temperature": model["temperature"], "reasoning": model["reasoning"],
            "attachment": model["attachment"], "toolcall": model["tool_call"],
            "input": _modalities(model, "input"), "output": _modalities(model, "output"),
            "interleaved": model.get("interleaved", False),
        },
        "cost": out_cost,
        "limit": model["limit"],
        "status": _status(model),
        "options": without_secrets(model.get("options") or {}),
        "headers": without_secrets(model.get("headers") or {}),
        "release_date": model.get("release_date", ""),
        "variants": {},
    }
    return out


def provider_internal(entry: ProviderEntry) -> dict:
    """1.18's internal Provider: {id, name, source, env, options, models{id → internal Model}} (no `key`)."""
    record = entry.record
    return {
        "id": record["id"], "name": record["name"], "source": entry.source, "env": record.get("env", []),
        "options": without_secrets(entry.options),
        "models": {model_id: model_internal(entry, model) for model_id, model in record.get("models", {}).items()},
    }


def provider_v2(entry: ProviderEntry) -> dict:
    record = entry.record
    api: dict = {"type": "aisdk", "package": record.get("npm") or "@ai-sdk/openai-compatible"}
    url = entry.options.get("baseURL") or record.get("api")
    if url:
        api["url"] = url
    return {"id": record["id"], "name": record["name"], "api": api,
            "request": {"headers": without_secrets(entry.options.get("headers") or {}), "body": {}}}


def _released_ms(date: str) -> int | None:
    try:
        day = datetime.date.fromisoformat(date)
    except (TypeError, ValueError):
        return None
    return int(datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC).timestamp() * 1000)


def model_v2(entry: ProviderEntry, model: dict) -> dict:
    cost = model.get("cost") or {}
    modalities = model.get("modalities") or {}
    out = {
        "id": model["id"],
        "providerID": entry.record["id"],
        "name": model["name"],
        "api": {"id": entry.api_ids.get(model["id"], model["id"]), "type": "aisdk",
                "package": _npm(entry, model), "url": entry.options.get("baseURL") or _api_url(entry, model)},
        "capabilities": {"tools": model["tool_call"], "input": modalities.get("input") or ["text"],
                         "output": modalities.get("output") or ["text"]},
        "request": {"headers": without_secrets(model.get("headers") or {}), "body": {}},
        "variants": [],
        "time": {"released": 0},  # 0: no release date known (a configured model without one)
        "cost": [{"input": cost.get("input", 0), "output": cost.get("output", 0),
                  "cache": {"read": cost.get("cache_read", 0), "write": cost.get("cache_write", 0)}}],
        "status": _status(model),
        "enabled": True,
        "limit": model["limit"],
    }
    if model.get("family"):
        out["family"] = model["family"]
    released = _released_ms(model.get("release_date", ""))
    if released is not None:
        out["time"]["released"] = released
    return out


def catalog_model(provider_id: str, model: dict) -> dict:
    """A flattened catalog model: the models.dev record plus its providerID."""
    return {**_clean_model(model), "providerID": provider_id}
