"""The admin's session cookie works on the API only with CSRF and JSON bodies (no cross-site form posts)."""
import httpx
import pytest
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client


@pytest.fixture
def cookie_client(alice, server):
    django_client = Client()
    django_client.force_login(alice.user)
    csrf = _get_new_csrf_string()
    cookies = {"sessionid": django_client.cookies["sessionid"].value, "csrftoken": csrf}
    with httpx.Client(base_url=server.url, cookies=cookies, timeout=30) as client:
        client.csrf = csrf
        yield client


def test_session_cookie_authenticates_safe_requests(cookie_client, alice):
    response = cookie_client.get("/path")
    assert response.status_code == 200
    assert response.json()["home"] == str(alice.root)


def test_unsafe_request_without_csrf_is_403(cookie_client):
    response = cookie_client.patch("/config", json={"share": "manual"})
    assert response.status_code == 403


def test_unsafe_request_with_csrf_but_text_plain_is_403(cookie_client):
    response = cookie_client.patch("/config", content=b'{"share": "manual"}',
                                   headers={"X-CSRFToken": cookie_client.csrf, "Content-Type": "text/plain"})
    assert response.status_code == 403


def test_unsafe_request_with_csrf_and_json_is_allowed(cookie_client):
    response = cookie_client.patch("/config", json={"share": "manual"}, headers={"X-CSRFToken": cookie_client.csrf})
    assert response.status_code == 200, response.text
    assert response.json()["share"] == "manual"
