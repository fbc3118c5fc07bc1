"""Passwords follow Django's four validators (similar to the username, too short, too common, all digits;
the length is AGENTSERVER_PASSWORD_MIN_LENGTH) wherever one is set through a form: the account page and the
admin's user pages."""
import httpx
from django.contrib.auth import get_user_model

from tests.web.conftest import csrf_of, sign_in_form


def _change_password(client: httpx.Client, new: str) -> httpx.Response:
    csrf = csrf_of(client.get("/account").text)
    return client.post("/account/password", data={"old_password": "alice-password", "new_password1": new,
                                                  "new_password2": new, "csrfmiddlewaretoken": csrf})


def test_the_account_page_refuses_a_weak_password(alice_cookies, alice):
    response = _change_password(alice_cookies, "a")
    assert response.status_code == 400
    assert "This password is too short. It must contain at least 12 characters." in response.text
    for weak, message in (("alice1", "The password is too similar to the username."),
                          ("123456789012345", "This password is entirely numeric."),
                          ("qwerty123456", "This password is too common.")):
        assert message in _change_password(alice_cookies, weak).text, weak
    alice.user.refresh_from_db()
    assert alice.user.check_password("alice-password")


def test_a_weak_new_password_does_not_use_up_the_old_passwords_tries(alice_cookies, alice):
    for _ in range(6):
        assert _change_password(alice_cookies, "a").status_code == 400
    assert _change_password(alice_cookies, "a long and new pass phrase").status_code == 302


def test_the_minimum_length_is_a_setting(server_factory, alice):
    live = server_factory({"AGENTSERVER_PASSWORD_MIN_LENGTH": "20"})
    with httpx.Client(base_url=live.url, timeout=30) as client:
        assert sign_in_form(client, "alice", "alice-password").status_code == 302
        response = _change_password(client, "seventeen letters")
        assert "at least 20 characters" in response.text and response.status_code == 400


def test_the_admins_user_pages_refuse_a_weak_password(server, transactional_db):
    get_user_model().objects.create_user(username="boss", password="boss-password-1", is_staff=True,
                                         is_superuser=True)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/admin/login/")
        assert client.post("/admin/login/", data={"username": "boss", "password": "boss-password-1",
                                                  "next": "/admin/", "csrfmiddlewaretoken": csrf_of(page.text)}
                           ).status_code == 302
        form = client.get("/admin/auth/user/add/")
        added = client.post("/admin/auth/user/add/", data={
            "username": "dora", "usable_password": "true", "password1": "a", "password2": "a",
            "csrfmiddlewaretoken": csrf_of(form.text)})
        assert added.status_code == 200 and "This password is too short." in added.text
        assert not get_user_model().objects.filter(username="dora").exists()
        boss = get_user_model().objects.get(username="boss")
        form = client.get(f"/admin/auth/user/{boss.pk}/password/")
        changed = client.post(f"/admin/auth/user/{boss.pk}/password/", data={
            "password1": "a", "password2": "a", "csrfmiddlewaretoken": csrf_of(form.text)})
        assert changed.status_code == 200 and "This password is too short." in changed.text
