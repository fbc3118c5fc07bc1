"""Signing in, a refused sign-in and signing out each leave exactly one audit record, with who, from where
and with what browser; the admin's login is recorded as the sign-in page's is."""
from tests.audit.helpers import details, last_id, records_after
from tests.web.conftest import csrf_of, sign_in_form

BROWSER = {"User-Agent": "AuditTest/1.0 (a browser)"}


def test_signing_in_and_out_leaves_one_record_each_naming_the_person(browser_client, alice):
    mark = last_id()
    browser_client.headers.update(BROWSER)
    assert sign_in_form(browser_client, "alice", "alice-password").status_code == 302
    page = browser_client.get("/account")
    response = browser_client.post("/signout", data={"csrfmiddlewaretoken": csrf_of(page.text)},
                                   headers={"Origin": str(browser_client.base_url).rstrip("/")})
    assert response.status_code == 302
    rows = records_after(mark)
    assert [row.action for row in rows] == ["auth.signin", "auth.signout"]
    for row in rows:
        assert (row.actor_person, row.actor_name, row.outcome) == (alice.user.pk, "alice", "success")
        assert row.actor_address == "127.0.0.1" and row.actor_user_agent == BROWSER["User-Agent"]
        assert (row.object_type, row.object_id) == ("user", str(alice.user.pk))


def test_a_wrong_password_is_one_failed_record_naming_the_username_and_never_the_password(browser_client, alice):
    mark = last_id()
    assert sign_in_form(browser_client, "alice", "not-her-password").status_code == 401
    [row] = records_after(mark)
    assert (row.action, row.outcome, row.actor_person, row.actor_name) == ("auth.signin_failed", "failure", None,
                                                                           "alice")
    assert details(row)["reason"] == "wrong username or password"
    assert "not-her-password" not in row.details


def test_the_admins_login_is_recorded_as_a_sign_in(browser_client, server, transactional_db):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user(username="root", password="root-password", is_staff=True,
                                         is_superuser=True)
    mark = last_id()
    page = browser_client.get("/admin/login/")
    response = browser_client.post("/admin/login/?next=/admin/", data={
        "username": "root", "password": "root-password", "csrfmiddlewaretoken": csrf_of(page.text),
        "next": "/admin/"}, headers={"Origin": str(browser_client.base_url).rstrip("/")})
    assert response.status_code == 302, response.text
    [row] = records_after(mark)
    assert (row.action, row.actor_name, row.outcome) == ("auth.signin", "root", "success")
    assert details(row)["path"] == "/admin/login/"
