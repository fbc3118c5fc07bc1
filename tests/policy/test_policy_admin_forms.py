"""The policy admin's form: what cannot mean anything is refused with a reason; names the catalog does not
know are saved and flagged; a person's effective policy lists each policy that applies to them."""
import pytest
from django.contrib.auth import get_user_model

from policy_app.models import Policy
from tests.admin.conftest import staff, staff_client  # noqa: F401  (a signed-in superuser and their client)

ADD = "/admin/policy_app/policy/add/"


def form(**fields) -> dict:
    return {"allowed_providers": "", "allowed_models": "", "default_model": "", "mcp_local_commands": "",
            "mcp_remote_urls": "", "permission_ceilings": "", "max_steps": "", "sharing_allowed": "unknown",
            **fields}


@pytest.mark.parametrize("fields,error", [
    ({"allowed_models": "claude-sonnet-4"}, "Write each model as provider/model"),
    ({"permission_ceilings": "bash: maybe"}, "is not one of allow, ask, deny"),
    ({"permission_ceilings": "bash ask"}, 'write &quot;permission: allow|ask|deny&quot;'),
    ({"mcp_remote_urls": "mcp.example.com"}, "starts with https:// or http://"),
    ({"default_model": "anthropic/*"}, "without wildcards"),
    ({"default_model": "openai/gpt-5", "allowed_providers": "anthropic"}, "own lists of providers and models"),
])
def test_a_policy_that_cannot_mean_anything_is_refused_with_a_reason(staff_client, fields, error):
    answer = staff_client.post(ADD, form(**fields))
    assert answer.status_code == 200 and error in answer.content.decode()
    assert not Policy.objects.exists()


def test_unknown_providers_and_models_are_saved_and_flagged(staff_client):
    answer = staff_client.post(ADD, form(allowed_providers="anthropic\nacme", allowed_models="acme/*\nanthropic/*",
                                         permission_ceilings="web*: deny"), follow=True)
    page = answer.content.decode()
    assert "Saved, but the catalog does not know: provider acme, model acme/*" in page
    assert "Not in the catalog: provider acme, model acme/*" in page
    policy = Policy.objects.get()
    assert policy.allowed_providers == ["anthropic", "acme"] and policy.permission_ceilings == {"web*": "deny"}


def test_a_second_policy_for_the_same_scope_is_refused(staff_client):
    staff_client.post(ADD, form())
    answer = staff_client.post(ADD, form(max_steps="3"))
    assert answer.status_code == 200 and Policy.objects.count() == 1


def test_the_effective_view_of_a_person_under_no_policy_says_so(staff_client):
    person = get_user_model().objects.create_user(username="dora", password="x")
    page = staff_client.get("/admin/policy_app/policy/effective/", {"user": person.pk}).content.decode()
    assert "No policy restricts dora." in page
