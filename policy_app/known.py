"""What names a policy may use, to flag the ones nothing knows (saved anyway: a policy naming an unknown
provider or model allows nothing more). The providers and models come from the catalog, which lives in
providers_app, above this app: it hands in how to read them at start-up (ProvidersAppConfig.ready)."""
from __future__ import annotations

import fnmatch
from collections.abc import Callable

from policy_app.rules import STRICTNESS

# Every permission a tool asks for (sessions_app/runtime/tools), and the agent's own (doom_loop, plan_*).
PERMISSIONS = ("read", "edit", "glob", "grep", "list", "bash", "task", "external_directory", "todowrite",
               "todoread", "webfetch", "websearch", "codesearch", "lsp", "skill", "question", "doom_loop",
               "plan_enter", "plan_exit")

_catalog_reader: Callable[[], dict[str, set[str]]] | None = None


def read_catalog_with(reader: Callable[[], dict[str, set[str]]]) -> None:
    """`reader()` → {provider id: its model ids}."""
    global _catalog_reader
    _catalog_reader = reader


def catalog_names() -> dict[str, set[str]]:
    return _catalog_reader() if _catalog_reader is not None else {}


def unknown_permissions(ceilings: dict) -> list[str]:
    """Ceiling keys that match no permission (a key may use * and ? wildcards)."""
    return [key for key in ceilings
            if not any(fnmatch.fnmatchcase(name, key) for name in PERMISSIONS)]


def bad_actions(ceilings: dict) -> list[str]:
    return [f"{key}: {value!r}" for key, value in ceilings.items() if value not in STRICTNESS]


def unknown_names(*, providers: list[str], models: list[str], default_model: str) -> list[str]:
    """The providers, model patterns and default model no provider of the catalog has."""
    catalog = catalog_names()
    out = [f"provider {p}" for p in providers if p not in catalog]
    for pattern in [*models, *([default_model] if default_model else [])]:
        if not any(fnmatch.fnmatchcase(f"{provider}/{model}", pattern)
                   for provider, ids in catalog.items() for model in ids):
            out.append(f"model {pattern}")
    return out
