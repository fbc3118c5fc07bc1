"""Which credentials the API accepts, and which it refuses."""
import base64

import httpx
import pytest
from django.utils import timezone


def basic(user: str, secret: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()}


def test_bearer_token_is_accepted(alice, anon):
    assert anon.get("/path", headers={"Authorization": f"Bearer {alice.token}"}).status_code == 200


def test_basic_username_and_token_is_accepted(alice, anon):
    assert anon.get("/path", headers=basic("alice", alice.token)).status_code == 200


def test_basic_with_opencodes_default_username_is_accepted(alice, anon):
    response = anon.get("/path", headers=basic("opencode", alice.token))
    assert response.status_code == 200
    assert response.json()["home"] == str(alice.root)


def test_basic_with_another_users_name_is_refused(alice, bob, anon):
    assert anon.get("/path", headers=basic("bob", alice.token)).status_code == 401


def test_auth_token_query_parameter_is_accepted(alice, anon):
    assert anon.get("/path", params={"auth_token": alice.basic_auth_token}).status_code == 200


@pytest.mark.parametrize("headers", [
    {"Authorization": "Bearer as_not-a-token"},
    {"Authorization": "Basic !!!not-base64"},
    {"Authorization": "Token whatever"},
    {"Authorization": "Bearer"},
])
def test_wrong_credentials_are_401(alice, anon, headers):
    response = anon.get("/path", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Basic realm="agentserver"'
    assert response.json()["name"] == "UnauthorizedError"


def test_wrong_basic_password_and_wrong_query_token_are_401(alice, anon):
    assert anon.get("/path", headers=basic("alice", "as_wrong")).status_code == 401
    bad = base64.b64encode(b"alice:as_wrong").decode()
    assert anon.get("/path", params={"auth_token": bad}).status_code == 401


def test_a_revoked_token_is_401(alice):
    from auth_app.models import ApiToken
    from auth_app.tokens import token_revoke

    assert alice.get("/path").status_code == 200
    token_revoke(token=ApiToken.objects.get(user=alice.user))
    assert alice.get("/path").status_code == 401


def test_an_inactive_user_is_401(alice):
    alice.user.is_active = False
    alice.user.save()
    assert alice.get("/path").status_code == 401


def test_the_token_records_when_it_was_last_used(alice):
    from auth_app.models import ApiToken

    before = timezone.now()
    alice.get("/path")
    last_used = ApiToken.objects.get(user=alice.user).last_used
    assert last_used is not None and last_used >= before.replace(microsecond=0)
