"""/doc is an OpenAPI 3.1 document listing every route under its spec operation id."""
from tests.foundation.routes import all_routes


def test_doc_requires_authentication(anon):
    assert anon.get("/doc").status_code == 401


def test_doc_lists_every_route_with_its_operation_id(alice):
    response = alice.get("/doc")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    documented = {
        (method.upper(), path): operation["operationId"]
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    }
    missing = []
    for route in all_routes():
        expected_id = f"v2:{route.operation_id}" if route.mount == "v2" else route.operation_id
        documented_id = documented.get((route.method, route.path), "")
        # A method aliasing another for the same operation is documented as "<id>.<method>".
        if documented_id not in (expected_id, f"{expected_id}.{route.method.lower()}"):
            missing.append(str(route))
    assert not missing, missing
