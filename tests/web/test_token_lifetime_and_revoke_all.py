"""On the account page a token is made to last never, 7, 30 or 90 days, and the list says when each expires
(or that it has); the admin lists expiries too. Changing the password can also revoke every API token, which
closes the connections they opened; without the box ticked, tokens survive."""
import datetime
import re

import httpx
from django.utils import timezone

from auth_app.models import ApiToken
from tests.events.sse_client import SseStream
from tests.web.conftest import csrf_of, sign_in_form

NEW_PASSWORD = "new-Password-4242"


def create_token(client: httpx.Client, name: str, lifetime: str) -> httpx.Response:
    csrf = csrf_of(client.get("/account").text)
    return client.post("/account/tokens", data={"name": name, "lifetime": lifetime, "csrfmiddlewaretoken": csrf})


def token_row(page: str, token: ApiToken) -> str:
    return re.search(rf'<tr data-token="{token.pk}">(.*?)</tr>', page, re.S).group(1)


def test_a_token_made_for_seven_days_expires_then_and_the_list_says_so(alice_cookies, alice, server):
    response = create_token(alice_cookies, "week", "7")
    assert response.status_code == 201
    secret = re.search(r'<pre id="token-secret">(as_[^<]+)</pre>', response.text).group(1)
    token = ApiToken.objects.get(user=alice.user, name="week")
    assert datetime.timedelta(days=6, hours=23) < token.expires - timezone.now() <= datetime.timedelta(days=7)
    page = alice_cookies.get("/account").text
    assert timezone.localtime(token.expires).strftime("%Y-%m-%d") in token_row(page, token)
    assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {secret}"}).status_code == 200

    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() - datetime.timedelta(minutes=1))
    assert "expired" in token_row(alice_cookies.get("/account").text, token)
    assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {secret}"}).status_code == 401


def test_a_token_made_to_last_never_expires(alice_cookies, alice):
    assert create_token(alice_cookies, "forever", "").status_code == 201
    token = ApiToken.objects.get(user=alice.user, name="forever")
    assert token.expires is None
    assert "never" in token_row(alice_cookies.get("/account").text, token)


def test_a_lifetime_not_offered_is_refused_and_makes_no_token(alice_cookies, alice):
    before = ApiToken.objects.count()
    for lifetime in ("1", "-7", "365", "x", "7.5"):
        response = create_token(alice_cookies, "odd", lifetime)
        assert response.status_code == 400, lifetime
        assert "Choose how long the token lasts" in response.text
    assert ApiToken.objects.count() == before


def change_password(client: httpx.Client, *, revoke_tokens: bool) -> httpx.Response:
    csrf = csrf_of(client.get("/account").text)
    data = {"old_password": "alice-password", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD,
            "csrfmiddlewaretoken": csrf}
    if revoke_tokens:
        data["revoke_tokens"] = "on"
    return client.post("/account/password", data=data)


def test_a_password_change_can_revoke_every_token_and_close_their_streams(alice_cookies, alice, server):
    from auth_app.tokens import token_create

    _, second = token_create(user=alice.user, name="second")
    # The read timeout is below the heartbeat interval, when the periodic check would otherwise catch it.
    with SseStream(server.url, "/global/event", headers={"Authorization": f"Bearer {alice.token}"},
                   read_timeout=8) as stream:
        assert stream.next().data["payload"]["type"] == "server.connected"
        response = change_password(alice_cookies, revoke_tokens=True)
        assert response.status_code == 302
        stream.read_to_end()  # at once: the revocation reaches the stream, no periodic check needed
    assert not ApiToken.objects.filter(user=alice.user, revoked__isnull=True).exists()
    for secret in (alice.token, second):
        assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
    assert "revoked" in alice_cookies.get("/account").text


def test_a_password_change_without_the_box_keeps_the_tokens(alice_cookies, alice, server):
    assert change_password(alice_cookies, revoke_tokens=False).status_code == 302
    assert alice.get("/session").status_code == 200


def test_the_admin_lists_when_tokens_expire(server, alice):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user(username="boss", password="boss-password", is_staff=True,
                                         is_superuser=True)
    ApiToken.objects.filter(user=alice.user).update(expires=timezone.now() + datetime.timedelta(days=3))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert sign_in_form(client, "boss", "boss-password").status_code == 302
        listing = client.get("/admin/auth_app/apitoken/")
        assert listing.status_code == 200
        assert "column-expires" in listing.text
