"""Every API route (a URL pattern of the root URL conf's `original` and `v2` lists) is named by an operation id
the customer's spec or opencode's OpenAPI document gives its mount (a few of this server's own are listed below,
each with why), every operation a view serves is one, and grepping an operation id finds the view that serves
it and where it is mounted. (That every operation of the spec has a route is tests/test_battery.py's.)"""
import inspect
from pathlib import Path

import pytest
from django.urls import URLPattern

from server import urls
from tests.foundation.routes import all_routes, opencode_operations, spec_operations

ROOT = Path(__file__).resolve().parents[2]
OWN = {
    ("original", "doc"): "the OpenAPI document of this server's routes (opencode's /doc has no operation id)",
    ("original", "share.page"): "the self-hosted share page (opencode shares through its cloud service)",
    ("original", "share.data"): "the share page's JSON",
    ("v2", "audit.list"): "the audit log, for staff (docs/audit.md; opencode keeps none)",
    ("v2", "usage.list"): "what model calls cost, own or (staff) everyone's (docs/usage.md; opencode keeps none)",
}


def known() -> dict[str, set[str]]:
    ids: dict[str, set[str]] = {"original": set(), "v2": set()}
    for mount, _method, _path, operation_id in [*spec_operations(), *opencode_operations()]:
        ids[mount].add(operation_id)
    for mount, operation_id in OWN:
        ids[mount].add(operation_id)
    return ids


def patterns():
    """(mount, route, pattern) of every API route: the root URL conf's `original` and `v2` lists (the admin,
    its static files and any page for browsers are beside them in `urlpatterns`)."""
    for mount, entries in (("original", urls.original), ("v2", urls.v2)):
        for entry in entries:
            assert isinstance(entry, URLPattern), entry
            yield mount, str(entry.pattern), entry


API = {(mount, pattern.name) for mount, _, pattern in patterns()}
ROUTES = [route for route in all_routes() if (route.mount, route.name) in API]


def test_every_url_pattern_is_named_by_a_known_operation_id():
    ids = known()
    unknown = [f"{mount} {route}: {pattern.name!r}" for mount, route, pattern in patterns()
               if pattern.name not in ids[mount]]
    assert not unknown, "\n".join(unknown)


def test_every_operation_a_view_serves_is_known():
    ids = known()
    unknown = [str(route) for route in ROUTES if route.operation_id not in ids[route.mount]]
    assert not unknown, "\n".join(unknown)


def test_a_pattern_is_named_by_an_operation_it_serves():
    for route in ROUTES:
        served = {r.operation_id for r in ROUTES if r.mount == route.mount and r.path == route.path}
        assert route.name in served, route


def _source_of(view_class, operation_id: str) -> str:
    """The module of the class that declares `operation_id` (not the class agentserver.http.mounting combines
    two views that share a URL into)."""
    for cls in view_class.__mro__:
        declared = cls.__dict__.get("operation_ids", {}).values()
        if operation_id in declared and not cls.__module__.startswith("agentserver.http."):
            return inspect.getsource(inspect.getmodule(cls))
    raise AssertionError(f"no class of {view_class} declares {operation_id}")


def _declared(callback) -> list[tuple[str, str]]:
    """(operation id, the source of the module that declares it) of each operation a URL pattern's view serves."""
    view_class = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view_class is None:  # a stream view (agentserver.http.mounting.stream_view)
        return [(callback.operation_id, inspect.getsource(inspect.getmodule(callback)))]
    return [(operation_id, _source_of(view_class, operation_id))
            for operation_id in view_class.operation_ids.values()]


@pytest.mark.parametrize("mount,pattern,entry", list(patterns()), ids=[f"{m}:{p}" for m, p, _ in patterns()])
def test_grepping_an_operation_id_finds_its_view_and_where_it_is_mounted(mount, pattern, entry):
    """The module that declares an operation id also declares where its view is mounted (the view's
    `mounts`, a stream view's `@stream_view`): the URL conf is derived from them."""
    for operation_id, source in _declared(entry.callback):
        assert f'"{operation_id}"' in source, (mount, pattern, operation_id)
        assert f'"{pattern}"' in source, (mount, pattern, operation_id)
