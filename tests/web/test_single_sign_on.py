"""Single sign-on through OpenID Connect, against a scripted identity provider (tests/fakes/oidc_provider.py):
a verified identity signs in the user it is linked to; the first time, the one user with that verified email,
or a new user with no roots when the operator allows it; anything else is refused and opens no session."""
from urllib.parse import urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.fakes.oidc_provider import FakeIdentityProvider
from tests.web.conftest import SAME_ORIGIN, screenshot
from web_app.models import SingleSignOnIdentity

pytestmark = pytest.mark.long_running(seconds=20)  # scheduled before shorter files (tests/conftest.py)


@pytest.fixture(scope="module")
def idp():
    provider = FakeIdentityProvider()
    yield provider
    provider.close()


@pytest.fixture
def sso(server_factory, idp, transactional_db):
    """A server that signs in through the provider and creates no users."""
    idp.identity = {}
    return server_factory(idp.server_env(create_users=False))


@pytest.fixture
def sso_creating(server_factory, idp, transactional_db):
    idp.identity = {}
    return server_factory(idp.server_env(create_users=True))


def sign_in_through_provider(url: str, next_path: str = "/account") -> httpx.Client:
    """Follow the redirects a browser would: here → the provider → back here. Returns the cookie jar."""
    client = httpx.Client(base_url=url, timeout=30)
    response = client.get("/oidc/authenticate/", params={"next": next_path})
    assert response.status_code == 302
    at_provider = httpx.get(response.headers["location"], follow_redirects=False)
    assert at_provider.status_code == 302, at_provider.text
    callback = urlsplit(at_provider.headers["location"])
    back = client.get(f"{callback.path}?{callback.query}")
    client.landed = back.headers.get("location")  # type: ignore[attr-defined]
    return client


def test_the_sign_in_page_offers_the_provider(sso):
    page = httpx.get(f"{sso.url}/signin")
    assert 'id="sso"' in page.text and "Sign in with Fake IdP" in page.text


def test_an_unknown_identity_is_refused_when_creating_users_is_off(sso, idp):
    idp.identity = {"sub": "u-1", "email": "new@example.com", "email_verified": True}
    client = sign_in_through_provider(sso.url)
    assert client.landed == "/signin?sso=failed"
    assert client.get("/session", headers=SAME_ORIGIN).status_code == 401
    assert not get_user_model().objects.filter(email="new@example.com").exists()
    assert "Single sign-on did not sign you in" in client.get("/signin?sso=failed").text


def test_a_verified_email_links_the_existing_user_once(sso, idp, alice):
    alice.user.email = "alice@example.com"
    alice.user.save(update_fields=["email"])
    idp.identity = {"sub": "alice-at-idp", "email": "Alice@Example.com", "email_verified": True}
    client = sign_in_through_provider(sso.url)
    assert client.landed == "/account"
    assert client.get("/path", headers=SAME_ORIGIN).json()["home"] == str(alice.root)
    link = SingleSignOnIdentity.objects.get()
    assert (link.user, link.subject, link.issuer) == (alice.user, "alice-at-idp", idp.issuer)
    # The link holds even when the provider's email changes later.
    idp.identity = {"sub": "alice-at-idp", "email": "renamed@example.com", "email_verified": True}
    again = sign_in_through_provider(sso.url)
    assert again.get("/path", headers=SAME_ORIGIN).json()["home"] == str(alice.root)


def test_an_unverified_email_links_nobody(sso, idp, alice):
    alice.user.email = "alice@example.com"
    alice.user.save(update_fields=["email"])
    idp.identity = {"sub": "mallory", "email": "alice@example.com", "email_verified": False}
    client = sign_in_through_provider(sso.url)
    assert client.landed == "/signin?sso=failed"
    assert SingleSignOnIdentity.objects.count() == 0


def test_a_new_identity_gets_a_user_with_no_roots_when_allowed(sso_creating, idp, alice):
    idp.identity = {"sub": "dora-1", "email": "dora@example.com", "email_verified": True,
                    "preferred_username": "alice"}  # the name is taken: the new user gets another
    client = sign_in_through_provider(sso_creating.url)
    assert client.landed == "/account"
    user = SingleSignOnIdentity.objects.get(subject="dora-1").user
    assert user.username == "alice-2" and user != alice.user
    assert not user.has_usable_password()
    page = client.get("/account")
    assert "no directories yet" in page.text
    assert client.get("/path", headers=SAME_ORIGIN).status_code == 403  # no roots until an admin gives some
    assert client.get("/session", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 401


def test_a_person_signs_in_through_the_provider_in_a_browser(sso_creating, idp, chromium, web_app_copy):
    idp.identity = {"sub": "erin-1", "email": "erin@example.com", "email_verified": True,
                    "preferred_username": "erin"}
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{sso_creating.url}/")
    expect(page.locator("#sso")).to_be_visible()
    screenshot(page, "sign-in-with-sso")
    page.click("#sso")
    page.wait_for_url(f"{sso_creating.url}/")
    expect(page.get_by_text("Add project").first).to_be_visible()
    assert get_user_model().objects.filter(username="erin").exists()


def test_a_new_user_keeps_only_a_verified_email(sso_creating, idp):
    idp.identity = {"sub": "mallory-1", "email": "carol@example.com", "email_verified": False,
                    "preferred_username": "mallory"}
    assert sign_in_through_provider(sso_creating.url).landed == "/account"
    assert get_user_model().objects.get(username="mallory").email == ""
    idp.identity = {"sub": "frank-1", "email": "frank@example.com", "email_verified": True,
                    "preferred_username": "frank"}
    assert sign_in_through_provider(sso_creating.url).landed == "/account"
    assert get_user_model().objects.get(username="frank").email == "frank@example.com"


def test_an_unverified_email_cannot_claim_a_colleagues_identity_ahead_of_them(sso_creating, idp):
    idp.identity = {"sub": "mallory-1", "email": "carol@example.com", "email_verified": False,
                    "preferred_username": "mallory"}
    sign_in_through_provider(sso_creating.url)
    idp.identity = {"sub": "carol-1", "email": "carol@example.com", "email_verified": True,
                    "preferred_username": "carol"}
    sign_in_through_provider(sso_creating.url)
    carols = SingleSignOnIdentity.objects.get(subject="carol-1").user
    assert carols.username == "carol"
    assert carols != SingleSignOnIdentity.objects.get(subject="mallory-1").user


def test_a_verified_email_never_links_to_staff(sso, idp, alice):
    for flags in ({"is_superuser": True, "is_staff": True}, {"is_staff": True, "is_superuser": False}):
        get_user_model().objects.filter(pk=alice.user.pk).update(email="alice@example.com", **flags)
        idp.identity = {"sub": "alice-at-idp", "email": "ALICE@example.com", "email_verified": True}
        client = sign_in_through_provider(sso.url)
        assert client.landed == "/signin?sso=failed", flags
        assert client.get("/session", headers=SAME_ORIGIN).status_code == 401
        assert SingleSignOnIdentity.objects.count() == 0


def test_a_verified_email_never_links_to_an_account_whose_email_a_provider_wrote(sso, idp, alice):
    """An account made through single sign-on got its email from a provider (before this server kept only
    verified ones, an unverified one too): only an email an administrator set is trusted to link by."""
    earlier = get_user_model().objects.create_user(username="made-by-sso", email="carol@example.com")
    SingleSignOnIdentity.objects.create(user=earlier, issuer=idp.issuer, subject="someone-else")
    idp.identity = {"sub": "carol-1", "email": "carol@example.com", "email_verified": True}
    assert sign_in_through_provider(sso.url).landed == "/signin?sso=failed"
    assert not SingleSignOnIdentity.objects.filter(subject="carol-1").exists()


def test_an_address_that_is_a_staff_accounts_gets_no_second_account(sso_creating, idp, alice):
    get_user_model().objects.filter(pk=alice.user.pk).update(email="alice@example.com", is_staff=True,
                                                              is_superuser=True)
    idp.identity = {"sub": "alice-at-idp", "email": "ALICE@example.com", "email_verified": True,
                    "preferred_username": "alice"}
    assert sign_in_through_provider(sso_creating.url).landed == "/signin?sso=failed"
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]
