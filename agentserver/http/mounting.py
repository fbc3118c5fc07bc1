"""Where each operation is mounted, declared with the operation: a view class says `operation_ids` (method →
operation id) and, beside it, `mounts` (surface → URL pattern): "original" at the root, "v2" under /api, or
both. A plain view function (an event stream, GET only) says the same with `@stream_view(...)`. The URL conf
is derived from these declarations (`mounted_routes`), so grepping an operation id finds its view, its mount
and its handler in one place.

Order: Django takes the first pattern that matches a path, so the patterns of a surface are sorted most
specific first: at each segment a fixed word before a `<str:…>` or `<int:…>` parameter, and those before a
`<path:…>` one (session/active before session/<sessionID>, experimental/workspace/warp before
experimental/workspace/<workspaceID>). Two patterns that would match the same paths are refused."""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from types import ModuleType

from django.core.exceptions import ImproperlyConfigured
from django.urls import URLPattern, path
from rest_framework.views import APIView

SURFACES = ("original", "v2")
# The order a URL's operations are listed in: its pattern is named by the first (GET session.list before POST
# session.create).
METHOD_ORDER = ("GET", "POST", "PUT", "PATCH", "DELETE")


def stream_view(operation_id: str, **mounts: str) -> Callable[[Callable], Callable]:
    """Declare a plain view function (an event stream: GET only) serving `operation_id`, mounted on the
    surfaces `mounts` names (original=…, v2=…)."""
    def declare(view: Callable) -> Callable:
        view.operation_id = operation_id  # type: ignore[attr-defined]
        view.mounts = mounts  # type: ignore[attr-defined]
        return view
    return declare


def combine(*views: type[APIView]) -> type[APIView]:
    """One view class with every handler of `views` (the first that defines a method wins) and their
    operation_ids merged, for two operations on one URL (GET session.messages + POST session.prompt)."""
    operation_ids: dict = {}
    for view in views:
        for method, operation in getattr(view, "operation_ids", {}).items():
            operation_ids.setdefault(method, operation)
    name = "".join(view.__name__.removesuffix("View") for view in views) + "View"
    return type(name, tuple(views), {"operation_ids": operation_ids})


def mounted_routes(packages: Iterable[ModuleType], surface: str) -> list[URLPattern]:
    """The URL patterns of every view the modules of `packages` declare on `surface`, most specific first,
    each named by the operation id of its first method (METHOD_ORDER)."""
    if surface not in SURFACES:
        raise ImproperlyConfigured(f"unknown surface {surface!r}: one of {SURFACES}")
    views_at: dict[str, list] = {}
    for package in packages:
        for view in _declared_views(package):
            pattern = view.__dict__.get("mounts", {}).get(surface) if isinstance(view, type) \
                else view.mounts.get(surface)
            if pattern is not None:
                views_at.setdefault(pattern, []).append(view)
    patterns = sorted(views_at, key=_specificity)
    for before, after in zip(patterns, patterns[1:]):
        if _specificity(before) == _specificity(after):
            raise ImproperlyConfigured(f"{surface}: {before!r} and {after!r} would match the same paths")
    return [_url_pattern(pattern, views_at[pattern]) for pattern in patterns]


def _declared_views(package: ModuleType) -> list:
    """The view classes and stream views defined in the package's modules that declare where they are
    mounted (a class's own `mounts`, not one it inherits)."""
    modules = [package] + [importlib.import_module(info.name)
                           for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    found = []
    for module in modules:
        for value in vars(module).values():
            if getattr(value, "__module__", None) != module.__name__:
                continue
            declared = value.__dict__.get("mounts") if isinstance(value, type) else getattr(value, "mounts", None)
            if isinstance(declared, dict) and declared:
                unknown = set(declared) - set(SURFACES)
                if unknown:
                    raise ImproperlyConfigured(f"{module.__name__}.{value.__name__}: unknown surface(s) {unknown}")
                found.append(value)
    return found


def _url_pattern(pattern: str, views: list) -> URLPattern:
    functions = [view for view in views if not isinstance(view, type)]
    if functions:
        if len(views) != 1:
            raise ImproperlyConfigured(f"{pattern}: a stream view shares its URL with nothing")
        return path(pattern, functions[0], name=functions[0].operation_id)
    for view in views:  # each checked before any is ordered by its methods
        operations = getattr(view, "operation_ids", None) or {}
        if not operations:
            raise ImproperlyConfigured(f"{pattern}: {view.__name__} declares no operation_ids")
        if set(operations) - set(METHOD_ORDER):
            raise ImproperlyConfigured(f"{pattern}: {view.__name__} serves a method outside {METHOD_ORDER}")
    views.sort(key=_first_method)
    view_class = views[0] if len(views) == 1 else combine(*views)
    operations = view_class.operation_ids
    first = next(method for method in METHOD_ORDER if method in operations)
    return path(pattern, view_class.as_view(), name=operations[first])


def _first_method(view: type) -> int:
    return min(METHOD_ORDER.index(method) for method in view.operation_ids)


def _specificity(pattern: str) -> tuple:
    """Sorts a pattern before the patterns it is more specific than: per segment, a word (0) before a
    parameter (1) before a `path` parameter, which takes the rest of the path (2)."""
    key = []
    for segment in pattern.split("/"):
        if segment.startswith("<path:"):
            key.append((2, ""))
        elif segment.startswith("<"):
            key.append((1, ""))
        else:
            key.append((0, segment))
    return tuple(key)
