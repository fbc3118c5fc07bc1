"""CORS, allowed hosts and the body-size limit, each on a server started with its own settings."""
import httpx
import pytest

ALLOWED = "http://localhost:3000"


@pytest.fixture(scope="module")
def cors_server(server_factory):
    return server_factory({"AGENTSERVER_CORS_ORIGINS": ALLOWED})


@pytest.fixture(scope="module")
def small_body_server(server_factory):
    return server_factory({"AGENTSERVER_MAX_BODY_BYTES": "1000"})


def test_allowed_origin_gets_its_origin_echoed(cors_server, alice):
    preflight = httpx.options(f"{cors_server.url}/session", headers={
        "Origin": ALLOWED, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type"})
    assert preflight.status_code in (200, 204)
    assert preflight.headers["access-control-allow-origin"] == ALLOWED
    response = httpx.get(f"{cors_server.url}/path", headers={"Origin": ALLOWED, "Authorization": f"Bearer {alice.token}"})
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ALLOWED


def test_other_origins_get_no_cors_headers(cors_server, alice):
    preflight = httpx.options(f"{cors_server.url}/session", headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers
    response = httpx.get(f"{cors_server.url}/path",
                         headers={"Origin": "http://evil.example", "Authorization": f"Bearer {alice.token}"})
    assert "access-control-allow-origin" not in response.headers


def test_a_foreign_host_header_is_400(alice):
    response = alice.get("/path", headers={"Host": "evil.example"})
    assert response.status_code == 400


def test_a_body_over_the_limit_is_413(small_body_server, alice):
    with httpx.Client(base_url=small_body_server.url, headers={"Authorization": f"Bearer {alice.token}"}) as client:
        big = {"instructions": ["x" * 2000]}
        response = client.patch("/config", json=big)
        assert response.status_code == 413
        assert response.json()["name"] == "PayloadTooLargeError"
        assert client.patch("/config", json={"share": "manual"}).status_code == 200


def test_a_chunked_body_over_the_limit_is_413(small_body_server, alice):
    def chunks():
        yield b'{"instructions": ["'
        for _ in range(20):
            yield b"x" * 200
        yield b'"]}'

    with httpx.Client(base_url=small_body_server.url, headers={"Authorization": f"Bearer {alice.token}"}) as client:
        response = client.patch("/config", content=chunks(), headers={"Content-Type": "application/json"})
        assert response.status_code == 413


def test_a_small_chunked_body_is_read(alice):
    def chunks():
        yield b'{"share": '
        yield b'"auto"}'

    response = alice.patch("/config", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    assert response.json()["share"] == "auto"


def test_api_responses_carry_a_length_and_security_headers(alice, server):
    """Token requests run the API's short middleware chain: still a Content-Length (not a chunked body) and
    the security headers; the admin keeps the full chain (its frame protection, its session)."""
    response = httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {alice.token}"})
    assert response.status_code == 200
    assert int(response.headers["content-length"]) == len(response.content)
    assert "transfer-encoding" not in response.headers
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "x-frame-options" not in response.headers
    missing = httpx.get(f"{server.url}/session/ses_nope", headers={"Authorization": f"Bearer {alice.token}"})
    assert missing.status_code == 404
    assert int(missing.headers["content-length"]) == len(missing.content)
    admin = httpx.get(f"{server.url}/admin/login/")
    assert admin.status_code == 200
    assert admin.headers["x-frame-options"] == "DENY"
    assert "csrftoken" in admin.cookies
