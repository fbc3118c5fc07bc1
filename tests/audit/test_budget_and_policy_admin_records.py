"""Budgets and policies set in the admin are admin changes like any other: one audit record each, naming the
administrator, with each field before and after; a deletion too."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from policy_app.models import Policy
from tests.audit.helpers import details, last_id, records_after
from usage_app.models import Budget


@pytest.fixture
def admin_client(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user(username="root", password="x", is_staff=True,
                                                            is_superuser=True))
    return client


def policy_form(**fields) -> dict:
    return {"allowed_providers": "", "allowed_models": "", "default_model": "", "mcp_local_commands": "",
            "mcp_remote_urls": "", "permission_ceilings": "", "max_steps": "", "sharing_allowed": "unknown",
            **fields}


def test_a_budget_added_changed_and_deleted_leaves_three_records(admin_client):
    mark = last_id()
    form = {"scope": "everyone", "period": "month", "amount": "500", "warn_percent": "80"}
    assert admin_client.post("/admin/usage_app/budget/add/", form).status_code == 302
    budget = Budget.objects.get()
    assert admin_client.post(f"/admin/usage_app/budget/{budget.pk}/change/",
                             {**form, "amount": "250"}).status_code == 302
    assert admin_client.post(f"/admin/usage_app/budget/{budget.pk}/delete/", {"post": "yes"}).status_code == 302
    added, changed, deleted = records_after(mark)
    assert [r.action for r in (added, changed, deleted)] == ["admin.add", "admin.change", "admin.delete"]
    assert {r.object_type for r in (added, changed, deleted)} == {"usage_app.budget"}
    assert changed.actor_name == "root"
    assert details(changed)["fields"]["amount"]["after"] in ("250", "250.00", 250, 250.0)


def test_a_policy_change_records_the_ceiling_before_and_after(admin_client):
    assert admin_client.post("/admin/policy_app/policy/add/", policy_form(
        permission_ceilings="bash: ask")).status_code == 302
    policy = Policy.objects.get()
    mark = last_id()
    assert admin_client.post(f"/admin/policy_app/policy/{policy.pk}/change/", policy_form(
        permission_ceilings="bash: deny")).status_code == 302
    [row] = records_after(mark)
    assert (row.action, row.object_type, row.object_id) == ("admin.change", "policy_app.policy", str(policy.pk))
    assert "permission_ceilings" in details(row)["fields"]
