"""/account says "Managed by your organization" and lists what applies, only when a policy applies."""
import httpx

from tests.web.conftest import sign_in_form


def account_page(server, persona) -> str:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        assert sign_in_form(client, persona.user.username, f"{persona.user.username}-password").status_code == 302
        return client.get("/account", headers={"Accept": "text/html"}).text


def test_the_account_page_lists_the_policy_that_applies(server, alice, set_policy):
    set_policy(allowed_models=["anthropic/claude-*"], max_steps=12)
    set_policy(group="contractors", members=[alice], permission_ceilings={"bash": "deny"}, sharing_allowed=False)
    html = account_page(server, alice)
    assert "Managed by your organization" in html
    assert "anthropic/claude-*" in html and "at least deny" in html and "not allowed" in html
    assert "policy of group &#x27;contractors&#x27;" in html


def test_without_a_policy_the_account_page_has_no_managed_section(server, alice, bob, set_policy):
    set_policy(group="contractors", members=[bob], permission_ceilings={"bash": "deny"})
    assert "Managed by your organization" not in account_page(server, alice)
