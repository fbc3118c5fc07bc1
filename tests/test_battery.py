"""The battery every route gets for free, generated from the URL conf: anonymous callers are refused,
malformed JSON bodies are 400s, unknown ids are 404/400 (never 500), and every operation of the spec
has a route."""
import pytest

from tests.foundation.routes import all_routes, spec_operations

ROUTES = all_routes()
PUBLIC = {"global.health"}


def is_public(route) -> bool:
    return route.operation_id in PUBLIC or route.operation_id.startswith("share.") or route.name.startswith("share.")


def send(client, route, **kwargs):
    """Send without waiting for a streamed body (SSE routes would never end)."""
    with client.stream(route.method, route.url(), **kwargs) as response:
        if "text/event-stream" in response.headers.get("content-type", ""):
            return response.status_code, response.headers, None
        response.read()
        return response.status_code, response.headers, response


def _ids(routes):
    return [f"{r.mount}:{r.method}:{r.path}" for r in routes]


PROTECTED = [r for r in ROUTES if not is_public(r)]
WITH_BODY = [r for r in ROUTES if r.method in ("POST", "PUT", "PATCH") and r.is_drf and not is_public(r)]
WITH_IDS = [r for r in ROUTES if r.params and r.is_drf and not is_public(r)]


@pytest.mark.parametrize("route", PROTECTED, ids=_ids(PROTECTED))
def test_every_route_refuses_anonymous_callers(anon, route):
    status, headers, _ = send(anon, route, json={} if route.method in ("POST", "PUT", "PATCH") else None)
    assert status == 401, route
    assert headers.get("www-authenticate") == 'Basic realm="agentserver"'


@pytest.mark.parametrize("route", PROTECTED, ids=_ids(PROTECTED))
def test_every_route_refuses_a_wrong_token(anon, route):
    status, _, _ = send(anon, route, headers={"Authorization": "Bearer as_wrong"})
    assert status == 401, route


@pytest.mark.parametrize("route", WITH_BODY, ids=_ids(WITH_BODY))
def test_every_body_route_answers_malformed_json_with_400(alice, route):
    status, _, response = send(alice.client, route, content=b'{"nope', params={"directory": str(alice.repo)},
                               headers={"Content-Type": "application/json"})
    assert status == 400, route
    assert response.json()["name"] == "BadRequestError"


@pytest.mark.parametrize("route", WITH_IDS, ids=_ids(WITH_IDS))
def test_every_route_answers_an_unknown_id_with_404_or_400(alice, route):
    kwargs = {"json": {}} if route.method in ("POST", "PUT", "PATCH") else {}
    status, _, response = send(alice.client, route, params={"directory": str(alice.repo)}, **kwargs)
    assert status in (400, 404), (route, status, response and response.text)
    assert response.json()["name"] in ("NotFoundError", "BadRequestError")


def test_every_drf_route_declares_its_operation_ids():
    from django.urls import URLPattern, URLResolver, get_resolver

    missing = []

    def walk(patterns, prefix=""):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                if not str(entry.pattern).startswith("admin/"):
                    walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern) and hasattr(entry.callback, "cls"):
                if not getattr(entry.callback.cls, "operation_ids", None) or not entry.name:
                    missing.append(prefix + str(entry.pattern))

    walk(get_resolver().url_patterns)
    assert not missing


def test_every_operation_of_the_spec_has_a_route():
    routed = {(r.mount, r.method, r.path, r.operation_id) for r in ROUTES}
    missing = [op for op in spec_operations() if op not in routed]
    assert not missing, "missing routes:\n" + "\n".join(f"{m} {meth} {p} ({o})" for m, meth, p, o in missing)


def test_the_spec_tables_were_read():
    operations = spec_operations()
    assert len([o for o in operations if o[0] == "original"]) >= 40
    assert len([o for o in operations if o[0] == "v2"]) >= 60
