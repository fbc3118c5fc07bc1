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


def _operations(document):
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


def test_path_ids_carry_the_pattern_the_edge_checks(alice, anon):
    document = alice.get("/doc").json()
    schema = next(p["schema"] for p in document["paths"]["/pty/{ptyID}"]["put"]["parameters"] if p["name"] == "ptyID")
    assert schema["pattern"] == "^pty" and schema["maxLength"] == 64
    # What the document refuses, the server refuses; what it admits gets past the check (to a 404 here).
    assert alice.put("/pty/0", json={}).status_code == 400
    assert alice.put("/pty/pty_nope", json={}).status_code == 404
    assert anon.put("/pty/0", json={}).status_code == 401


def test_bodies_and_queries_are_the_serializers_the_views_parse_with(alice):
    document = alice.get("/doc").json()
    schemas = document["components"]["schemas"]
    body = document["paths"]["/session"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    create = schemas[body["$ref"].rsplit("/", 1)[1]]
    assert {"parentID", "title", "agent", "model", "permission"} <= set(create["properties"])
    assert create["properties"]["title"]["maxLength"] == 1024
    query = {p["name"]: p for p in document["paths"]["/api/session"]["get"]["parameters"]}
    assert {"limit", "order", "cursor", "directory", "workspace"} <= set(query)
    assert query["directory"]["schema"]["pattern"].startswith("^(/")
    # A DELETE that reads a body documents it too.
    assert "requestBody" in document["paths"]["/experimental/worktree"]["delete"]


def test_every_operation_states_its_errors_in_the_one_error_shape(alice):
    document = alice.get("/doc").json()
    assert document["components"]["schemas"]["Error"]["required"] == ["name", "data"]
    anonymous = {"global.health", "v2:health.get", "share.page", "share.data"}
    for path, method, operation in _operations(document):
        responses = operation["responses"]
        if "parameters" in operation or "requestBody" in operation:
            assert "400" in responses, (method, path)
        if operation["operationId"] not in anonymous:
            assert "401" in responses and "WWW-Authenticate" in responses["401"]["headers"], (method, path)
        if "requestBody" in operation:
            assert "413" in responses, (method, path)
        for status, response in responses.items():
            if status >= "400" and "content" in response:
                assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert "409" in document["paths"]["/session/{sessionID}/shell"]["post"]["responses"]
    assert "429" in document["paths"]["/pty"]["post"]["responses"]


def test_a_fresh_worker_answers_many_concurrent_doc_requests_with_one_document(server_factory, alice):
    """Several clients loading /doc at once from a worker that has not built it yet (the contract test's five
    fuzzers do) all get the same document: building it is not safe to run twice at once."""
    import concurrent.futures

    import httpx

    live = server_factory()

    def load(_):
        with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {alice.token}"}, timeout=60) as c:
            response = c.get("/doc")
            return response.status_code, response.content

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(load, range(8)))
    assert [status for status, _ in answers] == [200] * 8, live.log()[-3000:]
    assert len({body for _, body in answers}) == 1
