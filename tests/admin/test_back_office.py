"""The admin: staff only; tokens shown once and revocable; auth account secrets write-only; sessions read-only
with their transcript; shares revocable; PTY rows killable only through the PTY service."""
import re

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from auth_app.accounts import active_credential
from auth_app.models import AllowedRoot, ApiToken, AuthAccount
from auth_app.tokens import token_lookup
from sessions_app.models import Message, Part, PermissionRequest, Session, Share

SECRET = "sk-admin-SECRET-0123456789abcdef"

PAGES = ["/admin/", "/admin/auth/user/", "/admin/auth_app/apitoken/", "/admin/auth_app/authaccount/",
         "/admin/auth_app/authaccount/add/", "/admin/projects_app/project/", "/admin/projects_app/workspace/",
         "/admin/sessions_app/session/", "/admin/sessions_app/share/", "/admin/sessions_app/permissionrequest/",
         "/admin/pty_app/pty/"]


def _admin_url(obj, view: str = "change") -> str:
    """The admin's own URL for a row: it escapes "_" in a key (acc_22… would otherwise read as acc"…)."""
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=[quote(obj.pk)])


def test_every_page_opens_for_staff(staff_client):
    for url in PAGES:
        assert staff_client.get(url).status_code == 200, url


def test_nobody_else_gets_in(db):
    get_user_model().objects.create_user(username="plain", password="pw")
    client = Client()
    assert client.get("/admin/auth_app/authaccount/").status_code == 302  # to the login page
    assert client.login(username="plain", password="pw")
    for url in PAGES:
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], url


def test_create_token_action_shows_the_token_once(staff_client):
    user = get_user_model().objects.create_user(username="dora")
    response = staff_client.post("/admin/auth/user/", {"action": "create_api_token", "_selected_action": [user.pk]})
    assert response.status_code == 200
    secret = re.search(r'class="api-token">([^<]+)<', response.content.decode()).group(1)
    assert token_lookup(secret).user == user
    # never again: the token's pages show only its prefix
    token = ApiToken.objects.get(user=user)
    assert secret not in staff_client.get(_admin_url(token)).content.decode()
    assert secret not in staff_client.get(_admin_url(user)).content.decode()


def test_revoke_action_revokes(staff_client):
    from auth_app.tokens import token_create

    user = get_user_model().objects.create_user(username="eve")
    token, secret = token_create(user=user)
    staff_client.post("/admin/auth_app/apitoken/", {"action": "revoke_tokens", "_selected_action": [token.pk]})
    assert token_lookup(secret) is None


def test_user_roots_are_edited_inline(staff_client, tmp_path):
    user = get_user_model().objects.create_user(username="finn")
    page = staff_client.get(_admin_url(user)).content.decode()
    assert "roots-TOTAL_FORMS" in page


def _account_form(**overrides):
    data = {"owner": "", "service_id": "openai", "description": "team key", "credential_type": "api",
            "secret": SECRET, "refresh": "", "expires": "", "make_active": "on"}
    data.update(overrides)
    return data


def test_auth_account_secret_is_write_only(staff_client, staff):
    response = staff_client.post("/admin/auth_app/authaccount/add/", _account_form(owner=staff.pk))
    assert response.status_code == 302, response.content.decode()[:3000]
    account = AuthAccount.objects.get(owner=staff)
    assert SECRET not in account.ciphertext
    assert active_credential(staff, "openai") == {"type": "api", "key": SECRET}

    change = staff_client.get(_admin_url(account)).content.decode()
    listing = staff_client.get("/admin/auth_app/authaccount/").content.decode()
    assert "sk-…cdef" in change and "sk-…cdef" in listing
    assert f'href="{_admin_url(account)}"' in listing  # the listing links to the page read above
    assert SECRET not in change and SECRET not in listing
    assert 'type="password"' in change and 'value="sk-' not in change

    # saving without a new key keeps the old one; a new key replaces it
    staff_client.post(_admin_url(account),
                      _account_form(description="renamed", secret=""))
    assert active_credential(staff, "openai")["key"] == SECRET
    assert AuthAccount.objects.get(pk=account.pk).description == "renamed"
    staff_client.post(_admin_url(account), _account_form(secret="sk-new-key-000000000000wxyz"))
    assert active_credential(staff, "openai")["key"] == "sk-new-key-000000000000wxyz"


def test_auth_account_form_rejects_incomplete_input(staff_client, staff):
    missing = staff_client.post("/admin/auth_app/authaccount/add/", _account_form(owner=staff.pk, secret=""))
    assert missing.status_code == 200 and "needs its key" in missing.content.decode()
    oauth = staff_client.post("/admin/auth_app/authaccount/add/",
                              _account_form(owner=staff.pk, credential_type="oauth"))
    assert oauth.status_code == 200 and SECRET not in oauth.content.decode()
    assert not AuthAccount.objects.exists()


def _session(owner) -> Session:
    session = Session.objects.create(id="ses_admintest0000000000000001", owner=owner, project_id="global",
                                     directory="/tmp", title="Admin transcript", version="0")
    message = Message.objects.create(id="msg_admintest0001", session=session, role="user",
                                     info={"id": "msg_admintest0001", "role": "user"})
    Part.objects.create(id="prt_admintest0001", message=message, session=session, type="text",
                        data={"type": "text", "text": "<b>please fix the bug</b>"})
    Part.objects.create(id="prt_admintest0002", message=message, session=session, type="tool",
                        data={"type": "tool", "tool": "bash", "state": {"status": "completed",
                                                                         "input": {"command": "ls"}, "output": "a.txt"}})
    return session


def test_session_page_shows_a_read_only_escaped_transcript(staff_client, staff):
    session = _session(staff)
    page = staff_client.get(_admin_url(session)).content.decode()
    assert "&lt;b&gt;please fix the bug&lt;/b&gt;" in page
    assert "a.txt" in page and "bash" in page
    assert 'name="title"' not in page  # read-only
    assert staff_client.post(_admin_url(session, "delete"), {"post": "yes"}).status_code == 403


def test_share_revoke_goes_through_the_sharing_service(staff_client, staff):
    session = _session(staff)
    share = Share.objects.create(session=session, slug="s1", secret="x", url="http://x/share/s1")
    staff_client.post("/admin/sessions_app/share/", {"action": "revoke_shares", "_selected_action": [share.pk]})
    assert not Share.objects.exists()


def test_pending_permission_requests_are_listed(staff_client, staff):
    session = _session(staff)
    PermissionRequest.objects.create(id="per_admintest0001", session=session, permission="bash", patterns=["ls"])
    page = staff_client.get("/admin/sessions_app/permissionrequest/?status__exact=pending").content.decode()
    assert "per_admintest0001" in page
