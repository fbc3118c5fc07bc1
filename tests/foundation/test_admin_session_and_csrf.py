"""The admin's (and the web app's) session cookie works on the API only from this server's own pages, which
stands in for a CSRF token (the web app sends none), and with JSON bodies (no cross-site form posts)."""
import httpx
import pytest
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client

SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}


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
    response = cookie_client.get("/path", headers=SAME_ORIGIN)
    assert response.status_code == 200
    assert response.json()["home"] == str(alice.root)


def test_a_request_that_does_not_say_where_it_comes_from_is_401(cookie_client):
    assert cookie_client.get("/path").status_code == 401
    assert cookie_client.patch("/config", json={"share": "manual"},
                               headers={"X-CSRFToken": cookie_client.csrf}).status_code == 401


def test_unsafe_request_from_own_pages_but_text_plain_is_403(cookie_client):
    response = cookie_client.patch("/config", content=b'{"share": "manual"}',
                                   headers={**SAME_ORIGIN, "Content-Type": "text/plain"})
    assert response.status_code == 403


def test_unsafe_request_from_own_pages_with_json_is_allowed(cookie_client, server):
    response = cookie_client.patch("/config", json={"share": "manual"},
                                   headers={**SAME_ORIGIN, "Origin": server.url})
    assert response.status_code == 200, response.text
    assert response.json()["share"] == "manual"
