"""One throttle for every password form (web_app/throttle.py): the sign-in page, the admin's login and the
account page's old password count in the same places; an outsider's wrong guesses cannot lock a person out of
the browsers they signed in from before, and cannot guess freely either; a client address comes from
X-Forwarded-For only when the operator names the proxy (AGENTSERVER_TRUSTED_PROXIES)."""
import httpx
import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session

from tests.web.conftest import csrf_of, sign_in_form

pytestmark = pytest.mark.long_running(seconds=30)  # scheduled before shorter files (tests/conftest.py)

LIMITS = {"AGENTSERVER_SIGNIN_FAILURES_PER_USER": "3", "AGENTSERVER_SIGNIN_FAILURES_PER_ADDRESS": "6",
          "AGENTSERVER_SIGNIN_FAILURES_PER_USER_NEW_BROWSERS": "8"}


@pytest.fixture
def throttled(server_factory):
    """Small limits; the client's address is its own (no proxy is trusted, as by default)."""
    return server_factory(LIMITS)


@pytest.fixture
def proxied(server_factory):
    """Small limits behind a trusted proxy on the loopback: X-Forwarded-For names each client's address."""
    return server_factory({**LIMITS, "AGENTSERVER_TRUSTED_PROXIES": "127.0.0.1"})


def _from(address: str) -> dict:
    return {"X-Forwarded-For": address}


def _admin_sign_in(client: httpx.Client, username: str, password: str) -> httpx.Response:
    page = client.get("/admin/login/", params={"next": "/admin/"})
    return client.post("/admin/login/", data={"username": username, "password": password, "next": "/admin/",
                                              "csrfmiddlewaretoken": csrf_of(page.text)})


def _wrong_old_password(client: httpx.Client) -> int:
    csrf = csrf_of(client.get("/account").text)
    return client.post("/account/password", data={
        "old_password": "nope", "new_password1": "Another-pass-phrase-7", "new_password2": "Another-pass-phrase-7",
        "csrfmiddlewaretoken": csrf}).status_code


def test_the_admins_login_is_throttled_like_the_sign_in_page(throttled, transactional_db):
    get_user_model().objects.create_user(username="boss", password="boss-password-1", is_staff=True,
                                         is_superuser=True)
    with httpx.Client(base_url=throttled.url, timeout=60) as client:
        for _ in range(3):
            response = _admin_sign_in(client, "boss", "wrong")
            assert response.status_code == 200 and "Please enter the correct username" in response.text
        refused = _admin_sign_in(client, "boss", "boss-password-1")
        assert refused.status_code == 200, refused.headers.get("location")
        assert "Too many failed sign-ins" in refused.text
        assert "sessionid" not in client.cookies
    assert Session.objects.count() == 0


def test_wrong_passwords_at_the_admin_count_on_the_sign_in_page_too(throttled, alice):
    with httpx.Client(base_url=throttled.url, timeout=60) as client:
        for _ in range(3):
            _admin_sign_in(client, "alice", "wrong")
        assert sign_in_form(client, "alice", "alice-password").status_code == 429


def test_a_spoofed_forwarded_for_gives_no_fresh_tries(throttled, alice):
    with httpx.Client(base_url=throttled.url, timeout=60) as client:
        statuses = [sign_in_form(client, f"name{n}", "wrong", address_headers=_from(f"203.0.113.{n}")).status_code
                    for n in range(8)]
    assert statuses == [401] * 6 + [429] * 2


def test_an_outsiders_wrong_guesses_do_not_lock_the_person_out(proxied, alice):
    with httpx.Client(base_url=proxied.url, timeout=60) as attacker:
        statuses = [sign_in_form(attacker, "alice", "wrong", address_headers=_from("203.0.113.9")).status_code
                    for _ in range(5)]
        assert statuses == [401] * 3 + [429] * 2
    with httpx.Client(base_url=proxied.url, timeout=60) as own_browser:
        assert sign_in_form(own_browser, "alice", "alice-password",
                            address_headers=_from("198.51.100.7")).status_code == 302


def test_guesses_from_many_addresses_leave_the_persons_own_browser_in(proxied, alice):
    with httpx.Client(base_url=proxied.url, timeout=60) as own_browser:
        assert sign_in_form(own_browser, "alice", "alice-password",
                            address_headers=_from("198.51.100.7")).status_code == 302
        assert own_browser.cookies.get("agentserver_device")
        own_browser.cookies.delete("sessionid")
        with httpx.Client(base_url=proxied.url, timeout=60) as attacker:
            statuses = [sign_in_form(attacker, "alice", f"guess-{n}",
                                     address_headers=_from(f"203.0.113.{n}")).status_code for n in range(10)]
        assert statuses == [401] * 8 + [429] * 2  # the username's limit for new browsers, all addresses together
        with httpx.Client(base_url=proxied.url, timeout=60) as new_browser:
            assert sign_in_form(new_browser, "alice", "alice-password",
                                address_headers=_from("198.51.100.8")).status_code == 429
        assert sign_in_form(own_browser, "alice", "alice-password",
                            address_headers=_from("198.51.100.7")).status_code == 302


def test_a_browser_that_signed_in_before_is_limited_on_its_own(proxied, alice):
    with httpx.Client(base_url=proxied.url, timeout=60) as own_browser:
        assert sign_in_form(own_browser, "alice", "alice-password").status_code == 302
        own_browser.cookies.delete("sessionid")
        statuses = [sign_in_form(own_browser, "alice", "wrong", address_headers=_from(f"203.0.113.{n}")).status_code
                    for n in range(5)]
        assert statuses == [401] * 3 + [429] * 2
        assert sign_in_form(own_browser, "alice", "alice-password").status_code == 429
    with httpx.Client(base_url=proxied.url, timeout=60) as other:
        assert sign_in_form(other, "alice", "alice-password", address_headers=_from("198.51.100.7")).status_code == 302


def test_a_browser_trusted_for_one_person_gets_no_exemption_for_another(proxied, alice, bob):
    with httpx.Client(base_url=proxied.url, timeout=60) as bobs_browser:
        assert sign_in_form(bobs_browser, "bob", "bob-password").status_code == 302
        bobs_browser.cookies.delete("sessionid")
        statuses = [sign_in_form(bobs_browser, "alice", "wrong", address_headers=_from(f"203.0.113.{n}")).status_code
                    for n in range(10)]
        assert statuses == [401] * 8 + [429] * 2


def test_the_device_cookie_is_signed_and_http_only(proxied, alice):
    with httpx.Client(base_url=proxied.url, timeout=60) as client:
        response = sign_in_form(client, "alice", "alice-password")
        device = [v for k, v in response.headers.multi_items()
                  if k == "set-cookie" and v.startswith("agentserver_device=")]
        assert len(device) == 1 and "HttpOnly" in device[0] and "SameSite=Lax" in device[0]
    with httpx.Client(base_url=proxied.url, timeout=60) as forger:
        forger.cookies.set("agentserver_device", "alice:forged")
        statuses = [sign_in_form(forger, "alice", "wrong", address_headers=_from("203.0.113.5")).status_code
                    for _ in range(4)]
        assert statuses == [401] * 3 + [429]


def test_wrong_old_passwords_on_the_account_page_do_not_lock_the_person_out(throttled, alice):
    with httpx.Client(base_url=throttled.url, timeout=60) as borrowed:
        assert sign_in_form(borrowed, "alice", "alice-password").status_code == 302
        assert [_wrong_old_password(borrowed) for _ in range(4)] == [400] * 3 + [429]
    with httpx.Client(base_url=throttled.url, timeout=60) as other_browser:
        assert sign_in_form(other_browser, "alice", "alice-password").status_code == 302
