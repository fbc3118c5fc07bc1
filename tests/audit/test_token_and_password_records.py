"""Tokens and passwords in the audit log: a token created and revoked on the account page, its first use from
each address (once per address, however often it is used), a password change; each with the person who did
it, and never a secret."""
import re

import httpx

from auth_app.models import ApiToken
from tests.audit.helpers import actions_after, details, last_id, records_after
from tests.web.conftest import csrf_of


def test_creating_and_revoking_a_token_on_the_account_page_leaves_a_record_each(alice_cookies, alice):
    mark = last_id()
    csrf = csrf_of(alice_cookies.get("/account").text)
    created = alice_cookies.post("/account/tokens", data={"name": "laptop", "lifetime": "", "csrfmiddlewaretoken": csrf})
    assert created.status_code == 201
    token = ApiToken.objects.get(user=alice.user, name="laptop")
    secret = re.search(r"as_[A-Za-z0-9_-]{20,}", created.text).group(0)
    assert alice_cookies.post(f"/account/tokens/{token.pk}/revoke",
                              data={"csrfmiddlewaretoken": csrf}).status_code == 302
    rows = records_after(mark)
    assert [row.action for row in rows] == ["token.created", "token.revoked"]
    for row in rows:
        assert (row.actor_person, row.object_type, row.object_id) == (alice.user.pk, "token", str(token.pk))
        assert details(row)["name"] == "laptop" and details(row)["prefix"] == token.prefix
        assert secret not in row.details


def test_a_token_is_recorded_the_first_time_it_is_used_from_each_address(server_factory, alice):
    server = server_factory({"AGENTSERVER_TRUSTED_PROXIES": "127.0.0.1"})
    mark = last_id()
    headers = {"Authorization": f"Bearer {alice.token}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
        for address in ("203.0.113.7", "203.0.113.7", "198.51.100.9", "203.0.113.7"):
            assert client.get("/session", headers={"X-Forwarded-For": address}).status_code == 200
    rows = records_after(mark, action="token.first_use")
    assert [row.actor_address for row in rows] == ["203.0.113.7", "198.51.100.9"]
    token = ApiToken.objects.get(user=alice.user)
    assert {(row.actor_person, row.actor_token, row.object_id) for row in rows} == {
        (alice.user.pk, token.pk, str(token.pk))}
    assert alice.token not in "".join(row.details for row in rows)


def test_a_password_change_is_recorded_with_its_revoked_tokens_and_no_password(alice_cookies, alice):
    mark = last_id()
    csrf = csrf_of(alice_cookies.get("/account").text)
    changed = alice_cookies.post("/account/password", data={
        "old_password": "alice-password", "new_password1": "new-Password-42", "new_password2": "new-Password-42",
        "revoke_tokens": "on", "csrfmiddlewaretoken": csrf})
    assert changed.status_code == 302
    assert actions_after(mark) == ["password.changed", "token.revoked"]
    assert all(row.actor_person == alice.user.pk for row in records_after(mark))
    assert not any("Password-42" in row.details or "alice-password" in row.details for row in records_after(mark))


def test_a_refused_password_change_leaves_no_record(alice_cookies, alice):
    mark = last_id()
    csrf = csrf_of(alice_cookies.get("/account").text)
    wrong = alice_cookies.post("/account/password", data={
        "old_password": "nope", "new_password1": "new-Password-42", "new_password2": "new-Password-42",
        "csrfmiddlewaretoken": csrf})
    assert wrong.status_code == 400
    assert actions_after(mark) == []
