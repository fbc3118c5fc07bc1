"""Budgets and policies set in the admin are admin changes like any other: one audit record each, naming the
administrator, with each field before and after; a deletion too."""

from policy_app.models import Policy
from tests.admin.conftest import staff, staff_client  # noqa: F401  (a signed-in superuser and their client)
from tests.audit.helpers import details, last_id, records_after
from usage_app.models import Budget


def policy_form(**fields) -> dict:
    return {"allowed_providers": "", "allowed_models": "", "default_model": "", "mcp_local_commands": "",
            "mcp_remote_urls": "", "permission_ceilings": "", "max_steps": "", "sharing_allowed": "unknown",
            **fields}


def test_a_budget_added_changed_and_deleted_leaves_three_records(staff_client):
    mark = last_id()
    form = {"scope": "everyone", "period": "month", "amount": "500", "warn_percent": "80"}
    assert staff_client.post("/admin/usage_app/budget/add/", form).status_code == 302
    budget = Budget.objects.get()
    assert staff_client.post(f"/admin/usage_app/budget/{budget.pk}/change/",
                             {**form, "amount": "250"}).status_code == 302
    assert staff_client.post(f"/admin/usage_app/budget/{budget.pk}/delete/", {"post": "yes"}).status_code == 302
    added, changed, deleted = records_after(mark)
    assert [r.action for r in (added, changed, deleted)] == ["admin.add", "admin.change", "admin.delete"]
    assert {r.object_type for r in (added, changed, deleted)} == {"usage_app.budget"}
    assert changed.actor_name == "root"
    assert details(changed)["fields"]["amount"]["after"] in ("250", "250.00", 250, 250.0)


def test_a_policy_change_records_the_ceiling_before_and_after(staff_client):
    assert staff_client.post("/admin/policy_app/policy/add/", policy_form(
        permission_ceilings="bash: ask")).status_code == 302
    policy = Policy.objects.get()
    mark = last_id()
    assert staff_client.post(f"/admin/policy_app/policy/{policy.pk}/change/", policy_form(
        permission_ceilings="bash: deny")).status_code == 302
    [row] = records_after(mark)
    assert (row.action, row.object_type, row.object_id) == ("admin.change", "policy_app.policy", str(policy.pk))
    assert "permission_ceilings" in details(row)["fields"]
