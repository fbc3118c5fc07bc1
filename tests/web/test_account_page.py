"""The account page, for every signed-in person: create a named token (shown once, with commands that use
it), list and revoke their own tokens, change their password, see their roots; staff see the admin link."""
import re

import httpx

from auth_app.models import ApiToken
from tests.web.conftest import SAME_ORIGIN, csrf_of, sign_in_form


def _create_token(client: httpx.Client, name: str) -> httpx.Response:
    token = csrf_of(client.get("/account").text)
    return client.post("/account/tokens", data={"name": name, "csrfmiddlewaretoken": token})


def test_the_page_shows_roots_tokens_and_no_admin_link_to_non_staff(alice_cookies, alice):
    page = alice_cookies.get("/account")
    assert page.status_code == 200
    assert str(alice.root) in page.text
    assert alice.token[:10] in page.text  # the persona's token, by its prefix only
    assert alice.token not in page.text
    assert 'id="admin-link"' not in page.text
    assert page.headers["cache-control"].startswith("max-age=0") or "no-store" in page.headers["cache-control"]


def test_staff_see_the_admin_link(server, transactional_db):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user(username="boss", password="boss-password", is_staff=True)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert sign_in_form(client, "boss", "boss-password").status_code == 302
        page = client.get("/account")
        assert 'href="/admin/" id="admin-link"' in page.text
        assert "no directories yet" in page.text
        assert client.get("/admin/").status_code == 200  # the same session signs staff in to the admin


def test_a_new_token_is_shown_once_with_commands_that_use_it(alice_cookies, alice, server):
    response = _create_token(alice_cookies, "laptop")
    assert response.status_code == 201
    secret = re.search(r'<pre id="token-secret">(as_[^<]+)</pre>', response.text).group(1)
    assert f"opencode attach {server.url} -u alice -p {secret} --dir {alice.root}" in response.text
    assert f"opencode run --attach {server.url} -u alice -p {secret}" in response.text
    assert f"createOpencodeClient({{ baseUrl: &quot;{server.url}&quot;" in response.text
    assert response.headers["cache-control"].endswith("private") or "no-store" in response.headers["cache-control"]
    assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    assert httpx.get(f"{server.url}/session", auth=("alice", secret)).status_code == 200
    again = alice_cookies.get("/account")
    assert "laptop" in again.text and secret not in again.text
    assert ApiToken.objects.filter(user=alice.user, name="laptop").count() == 1


def test_a_token_name_is_required_and_bounded(alice_cookies, alice):
    before = ApiToken.objects.count()
    assert _create_token(alice_cookies, "").status_code == 400
    assert _create_token(alice_cookies, "x" * 101).status_code == 400
    assert ApiToken.objects.count() == before


def test_a_revoked_token_stops_working(alice_cookies, alice, server):
    token = ApiToken.objects.get(user=alice.user)
    csrf = csrf_of(alice_cookies.get("/account").text)
    response = alice_cookies.post(f"/account/tokens/{token.pk}/revoke", data={"csrfmiddlewaretoken": csrf})
    assert response.status_code == 302
    assert "revoked" in alice_cookies.get("/account").text
    assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {alice.token}"}).status_code == 401
    # The browser session is not a token: it goes on.
    assert alice_cookies.get("/session", headers=SAME_ORIGIN).status_code == 200


def test_nobody_revokes_another_users_token(alice_cookies, bob, server):
    token = ApiToken.objects.get(user=bob.user)
    csrf = csrf_of(alice_cookies.get("/account").text)
    assert alice_cookies.post(f"/account/tokens/{token.pk}/revoke", data={"csrfmiddlewaretoken": csrf}).status_code == 404
    assert alice_cookies.post("/account/tokens/999999/revoke", data={"csrfmiddlewaretoken": csrf}).status_code == 404
    assert alice_cookies.post(f"/account/tokens/{token.pk}/revoke").status_code == 403  # no CSRF token
    assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {bob.token}"}).status_code == 200


def test_the_password_changes_only_with_the_current_one(alice_cookies, alice, server):
    with httpx.Client(base_url=server.url, timeout=30) as elsewhere:
        assert sign_in_form(elsewhere, "alice", "alice-password").status_code == 302
        csrf = csrf_of(alice_cookies.get("/account").text)
        wrong = alice_cookies.post("/account/password", data={
            "old_password": "nope", "new_password1": "new-Password-42", "new_password2": "new-Password-42",
            "csrfmiddlewaretoken": csrf})
        assert wrong.status_code == 400
        changed = alice_cookies.post("/account/password", data={
            "old_password": "alice-password", "new_password1": "new-Password-42", "new_password2": "new-Password-42",
            "csrfmiddlewaretoken": csrf})
        assert changed.status_code == 302
        assert alice_cookies.get("/session", headers=SAME_ORIGIN).status_code == 200  # this browser stays in
        assert elsewhere.get("/session", headers=SAME_ORIGIN).status_code == 401  # every other session ends
    with httpx.Client(base_url=server.url, timeout=30) as fresh:
        assert sign_in_form(fresh, "alice", "alice-password").status_code == 401
        assert sign_in_form(fresh, "alice", "new-Password-42").status_code == 302


def test_the_account_pages_need_a_signed_in_person(browser_client, alice):
    assert browser_client.get("/account").headers["location"] == "/signin?next=%2Faccount"
    assert browser_client.post("/account/tokens", data={"name": "x"}).status_code in (302, 403)
    assert ApiToken.objects.filter(name="x").count() == 0
