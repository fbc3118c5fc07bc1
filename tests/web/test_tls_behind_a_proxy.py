"""Behind a proxy that terminates TLS: X-Forwarded-Proto and X-Forwarded-For count only from the addresses the
operator names (AGENTSERVER_TRUSTED_PROXIES); over TLS, with an https public URL, every answer carries
Strict-Transport-Security, the browser pages' and the API's alike."""
import httpx
import pytest

TLS = {"X-Forwarded-Proto": "https"}


@pytest.fixture
def behind_tls(server_factory):
    return server_factory({"AGENTSERVER_PUBLIC_URL": "https://agentserver.example.com",
                           "AGENTSERVER_TRUSTED_PROXIES": "127.0.0.1"})


def test_every_answer_over_tls_carries_hsts(behind_tls, alice):
    with httpx.Client(base_url=behind_tls.url, timeout=30) as client:
        for path, headers in (("/signin", {}), ("/session", {"Authorization": f"Bearer {alice.token}"}),
                              ("/no/such/route", {}), ("/admin/login/", {})):
            response = client.get(path, headers={**TLS, **headers})
            assert response.headers.get("strict-transport-security") == "max-age=31536000", path


def test_plain_http_answers_carry_no_hsts(behind_tls, alice):
    response = httpx.get(f"{behind_tls.url}/signin")
    assert "strict-transport-security" not in response.headers


def test_a_forwarded_proto_from_an_untrusted_address_is_ignored(server, server_factory, alice):
    live = server_factory({"AGENTSERVER_PUBLIC_URL": "https://agentserver.example.com"})
    assert "strict-transport-security" not in httpx.get(f"{live.url}/signin", headers=TLS).headers
    assert "Secure" not in httpx.get(f"{server.url}/signin", headers=TLS).headers["set-cookie"]


def test_an_http_public_url_sends_no_hsts(server_factory, alice):
    live = server_factory({"AGENTSERVER_TRUSTED_PROXIES": "127.0.0.1"})
    assert "strict-transport-security" not in httpx.get(f"{live.url}/signin", headers=TLS).headers
