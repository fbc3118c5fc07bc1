"""The URL conf is derived from the views' declarations (agentserver/http/mounting.py): most specific pattern
first, two views on one URL combined and named by the first method's operation, a stream view named by its
operation; two patterns that would match the same paths, an unknown surface and a view with no operation ids
are refused when the URL conf loads. Driven with a package of views made here, as an app's api/ package is."""
import types

import pytest
from django.core.exceptions import ImproperlyConfigured

from agentserver.http.api import ApiView
from agentserver.http.mounting import mounted_routes, stream_view


def _package(name: str, **views) -> types.ModuleType:
    package = types.ModuleType(name)
    package.__path__ = []  # a package with no submodules: its own views only
    for attribute, view in views.items():
        view.__module__ = name
        setattr(package, attribute, view)
    return package


def _view(name: str, operations: dict, mounts: dict) -> type:
    return type(name, (ApiView,), {"operation_ids": operations, "mounts": mounts})


def test_patterns_are_sorted_most_specific_first_and_shared_urls_combined():
    item = _view("ItemView", {"GET": "thing.get"}, {"v2": "thing/<str:thingID>"})
    active = _view("ActiveView", {"GET": "thing.active"}, {"v2": "thing/active"})
    rest = _view("RestView", {"GET": "thing.rest"}, {"v2": "thing/<path:rest>/tail"})
    listing = _view("ListView", {"GET": "thing.list"}, {"v2": "thing", "original": "things"})
    create = _view("CreateView", {"POST": "thing.create"}, {"v2": "thing"})

    async def events(request):
        return None

    stream = stream_view("thing.events", v2="thing/<str:thingID>/events")(events)
    package = _package("fake_api_sorted", item=item, active=active, rest=rest, listing=listing, create=create,
                       stream=stream)
    v2 = mounted_routes([package], "v2")
    assert [str(p.pattern) for p in v2] == ["thing", "thing/active", "thing/<str:thingID>",
                                            "thing/<str:thingID>/events", "thing/<path:rest>/tail"]
    names = {str(p.pattern): p.name for p in v2}
    assert names["thing"] == "thing.list" and names["thing/<str:thingID>/events"] == "thing.events"
    combined = next(p for p in v2 if str(p.pattern) == "thing").callback.cls
    assert combined.operation_ids == {"GET": "thing.list", "POST": "thing.create"}
    assert [str(p.pattern) for p in mounted_routes([package], "original")] == ["things"]


def test_a_subclass_is_not_mounted_by_what_it_inherits():
    base = _view("BaseView", {"GET": "thing.get"}, {"v2": "thing/<str:thingID>"})
    child = type("ChildView", (base,), {"operation_ids": {"GET": "thing.child"}})
    package = _package("fake_api_inherit", base=base, child=child)
    assert [p.name for p in mounted_routes([package], "v2")] == ["thing.get"]


@pytest.mark.parametrize("views, message", [
    ({"a": ("AView", {"GET": "a.get"}, {"v2": "thing/<str:a>"}),
      "b": ("BView", {"GET": "b.get"}, {"v2": "thing/<str:b>"})}, "would match the same paths"),
    ({"a": ("AView", {"GET": "a.get"}, {"v3": "thing"})}, "unknown surface"),
    ({"a": ("AView", {}, {"v2": "thing"})}, "declares no operation_ids"),
    ({"a": ("AView", {"OPTIONS": "a.options"}, {"v2": "thing"})}, "serves a method outside"),
], ids=["same shape", "unknown surface", "no operations", "unknown method"])
def test_a_declaration_that_cannot_be_mounted_is_refused(views, message):
    package = _package(f"fake_api_{abs(hash(message))}", **{k: _view(*v) for k, v in views.items()})
    with pytest.raises(ImproperlyConfigured, match=message):
        mounted_routes([package], "v2")


def test_an_unknown_surface_is_refused():
    with pytest.raises(ImproperlyConfigured, match="unknown surface"):
        mounted_routes([], "v3")
