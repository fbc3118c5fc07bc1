"""The routes of the URL conf, as (mount, method, path, operation id, view), for the battery and /doc tests,
and the operations the customer's spec and opencode's OpenAPI document name."""
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

from agentserver import ids


def _shared(relative: str) -> Path:
    """CI checks out the repository with shared/ beside it; a developer's checkout has it in /work/shared."""
    return next((candidate for candidate in (Path(__file__).resolve().parents[2].parent / "shared" / relative,
                                             Path("/work/shared") / relative) if candidate.exists()),
                Path("shared") / relative)


SPEC = _shared("spec/api.md")
OPENCODE_OPENAPI = _shared("peer/openapi-1.18.33.json")
ID_PREFIXES = {
    "sessionID": "ses", "messageID": "msg", "partID": "prt", "permissionID": "per", "questionID": "que",
    "ptyID": "pty", "workspaceID": "wrk", "accountID": "acc", "requestID": "per",
}


@dataclass(frozen=True)
class Route:
    mount: str  # "original" | "v2"
    method: str
    path: str  # OpenAPI style: /session/{sessionID}
    operation_id: str
    name: str
    is_drf: bool
    view_class: type | None = field(default=None, compare=False, repr=False)

    @property
    def params(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.path)

    def url(self, values: dict | None = None) -> str:
        values = values or {}
        return re.sub(r"{(\w+)}", lambda m: values.get(m.group(1)) or unknown_id(m.group(1)), self.path)

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.operation_id})"


def unknown_id(param: str) -> str:
    if param in ID_PREFIXES:
        return ids.ascending(ID_PREFIXES[param])
    if param == "projectID":
        return "0" * 40
    return "no-such-" + param.lower()


def _walk(patterns, prefix="", namespace=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), ns)
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), namespace, entry


def _path(route: str) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def all_routes() -> list[Route]:
    routes = []
    for route, namespace, pattern in _walk(get_resolver().url_patterns):
        if route.startswith("admin/") or not pattern.name:
            continue
        mount = "v2" if namespace.startswith("v2:") else "original"
        view_class = getattr(pattern.callback, "cls", None) or getattr(pattern.callback, "view_class", None)
        operation_ids = getattr(view_class, "operation_ids", None) or getattr(pattern.callback, "operation_ids", None)
        if not operation_ids:
            operation_ids = {"GET": pattern.name}  # plain (SSE) views answer GET only
        for method, operation_id in operation_ids.items():
            routes.append(Route(mount, method.upper(), _path(route), operation_id, pattern.name,
                                is_drf=hasattr(pattern.callback, "cls"), view_class=view_class))
    return routes


def spec_operations() -> list[tuple[str, str, str, str]]:
    """(mount, method, path, operation id) from the tables of api.md §4.1 and §4.2."""
    if not SPEC.exists():
        import pytest

        pytest.skip(f"the customer's spec is not beside this checkout ({SPEC})")
    text = SPEC.read_text()
    out = []
    original = text.split("### 4.1", 1)[1].split("### 4.2", 1)[0]
    for match in re.finditer(r"^\| (GET|POST|PUT|PATCH|DELETE) \| (\S+) \| ([\w.]+) \|", original, re.M):
        out.append(("original", match.group(1), match.group(2), match.group(3)))
    v2 = text.split("### 4.2", 1)[1].split("## 5.", 1)[0]
    for match in re.finditer(r"^\| ([\w.]+) \|.*\| (GET|POST|PUT|PATCH|DELETE) /api(/\S*) \|$", v2, re.M):
        path = "/api" + re.sub(r":(\w+)", r"{\1}", match.group(3))
        out.append(("v2", match.group(2), path, match.group(1)))
    return out


def opencode_operations() -> list[tuple[str, str, str, str]]:
    """(mount, method, path, operation id) from opencode 1.18.33's OpenAPI document; its v2 ids (`v2.session.get`)
    without the `v2.` that the mount stands for here."""
    if not OPENCODE_OPENAPI.exists():
        import pytest

        pytest.skip(f"opencode's OpenAPI document is not beside this checkout ({OPENCODE_OPENAPI})")
    out = []
    for path, operations in json.loads(OPENCODE_OPENAPI.read_text())["paths"].items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            mount = "v2" if path.startswith("/api/") else "original"
            operation_id = operation["operationId"].removeprefix("v2.") if mount == "v2" else operation["operationId"]
            out.append((mount, method.upper(), path, operation_id))
    return out
