"""Every change an administrator makes in the admin is one audit record naming them, with each changed field
before and after (a secret field named, never shown): a person's fields and roots, their password, a group,
a provider key; deletions; the token actions."""
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from auth_app.models import ApiToken, AuthAccount
from auth_app.tokens import token_create
from tests.admin.conftest import staff, staff_client  # noqa: F401  (a signed-in superuser and their client)
from tests.audit.helpers import details, last_id, records_after

SECRET = "sk-admin-SECRET-0123456789abcdef"


def _url(obj, view: str = "change") -> str:
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=[quote(obj.pk)])


def _finn(**fields):
    return get_user_model().objects.create_user(username="finn", **fields)


def _user_form(user, **changes) -> dict:
    data = {"username": user.username, "first_name": user.first_name, "last_name": user.last_name,
            "email": user.email, "is_active": "on", "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
            "date_joined_1": user.date_joined.strftime("%H:%M:%S"), "last_login_0": "", "last_login_1": "",
            # What the page carries beside a field whose default is computed (the admin compares the two).
            "initial-date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
            "initial-date_joined_1": user.date_joined.strftime("%H:%M:%S"),
            "roots-TOTAL_FORMS": "0", "roots-INITIAL_FORMS": "0", "roots-MIN_NUM_FORMS": "0",
            "roots-MAX_NUM_FORMS": "1000", "api_tokens-TOTAL_FORMS": "0", "api_tokens-INITIAL_FORMS": "0",
            "api_tokens-MIN_NUM_FORMS": "0", "api_tokens-MAX_NUM_FORMS": "1000"}
    data.update(changes)
    return data


def test_changing_a_person_records_each_field_before_and_after_and_the_roots_added(staff_client, staff, tmp_path):
    finn = _finn()
    mark = last_id()
    response = staff_client.post(_url(finn), _user_form(
        finn, first_name="Finn", is_staff="on", **{"roots-TOTAL_FORMS": "1", "roots-0-path": str(tmp_path),
                                                   "roots-0-position": "0"}))
    assert response.status_code == 302, response.content.decode()[:2000]
    [row] = records_after(mark)
    assert (row.action, row.object_type, row.object_id) == ("admin.change", "auth.user", str(finn.pk))
    assert (row.actor_person, row.actor_name) == (staff.pk, "root")
    changed = details(row)
    assert changed["fields"] == {"first_name": {"before": "", "after": "Finn"},
                                 "is_staff": {"before": False, "after": True}}
    assert [entry["added"] for entry in changed["related"]] == ["auth_app.allowedroot"]
    assert str(tmp_path) in changed["related"][0]["object"]


def test_saving_a_person_unchanged_records_nothing(staff_client):
    finn = _finn()
    mark = last_id()
    assert staff_client.post(_url(finn), _user_form(finn)).status_code == 302
    assert records_after(mark) == []


def test_an_admin_password_change_is_recorded_without_the_password(staff_client, staff):
    finn = get_user_model().objects.create_user(username="finn", password="old-Password-1")
    mark = last_id()
    response = staff_client.post(reverse("admin:auth_user_password_change", args=[finn.pk]), {
        "password1": "brand-New-Secret-77", "password2": "brand-New-Secret-77", "usable_password": "true"})
    assert response.status_code == 302, response.content.decode()[:2000]
    [row] = records_after(mark)
    assert (row.action, row.object_id, row.actor_person) == ("password.changed", str(finn.pk), staff.pk)
    assert "brand-New-Secret-77" not in row.details


def test_a_provider_key_added_and_replaced_is_recorded_and_never_shown(staff_client, staff):
    mark = last_id()
    form = {"owner": staff.pk, "service_id": "openai", "description": "team key", "credential_type": "api",
            "secret": SECRET, "refresh": "", "expires": "", "make_active": "on"}
    assert staff_client.post("/admin/auth_app/authaccount/add/", form).status_code == 302
    account = AuthAccount.objects.get(owner=staff)
    assert staff_client.post(_url(account), {**form, "secret": "sk-new-key-000000000000wxyz",
                                             "description": "renamed"}).status_code == 302
    added, changed = records_after(mark)
    assert (added.action, changed.action) == ("admin.add", "admin.change")
    assert added.object_id == changed.object_id == account.pk
    assert details(changed)["fields"]["description"] == {"before": "team key", "after": "renamed"}
    assert details(changed)["fields"]["secret"] == "[redacted]"
    assert SECRET not in added.details + changed.details and "wxyz" not in changed.details


def test_groups_and_deletions_are_recorded(staff_client, staff):
    mark = last_id()
    assert staff_client.post("/admin/auth/group/add/", {"name": "reviewers"}).status_code == 302
    group = Group.objects.get(name="reviewers")
    finn = get_user_model().objects.create_user(username="finn")
    assert staff_client.post(_url(finn, "delete"), {"post": "yes"}).status_code == 302
    assert [(row.action, row.object_type, row.object_id) for row in records_after(mark)] == [
        ("admin.add", "auth.group", str(group.pk)), ("admin.delete", "auth.user", str(finn.pk))]


def test_the_token_actions_are_recorded_as_the_administrators(staff_client, staff):
    finn = get_user_model().objects.create_user(username="finn")
    token, _ = token_create(user=finn, name="old")
    mark = last_id()
    staff_client.post("/admin/auth_app/apitoken/", {"action": "revoke_tokens", "_selected_action": [token.pk]})
    staff_client.post("/admin/auth/user/", {"action": "create_api_token", "_selected_action": [finn.pk]})
    rows = records_after(mark)
    assert [row.action for row in rows] == ["token.revoked", "token.created"]
    assert {row.actor_person for row in rows} == {staff.pk}
    assert details(rows[1])["owner"] == "finn" and ApiToken.objects.filter(user=finn).count() == 2
