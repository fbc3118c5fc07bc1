"""The managed policy's admin driven in a real browser (Playwright over Debian's chromium): an administrator
sets everyone's and a group's policy, sees an unknown provider flagged and a mistyped permission refused,
and reads a person's effective policy with the policy that decided each setting; the person's /account page
says what applies, and the API obeys it."""
import pytest
from playwright.sync_api import expect

from tests.web.conftest import chromium, screenshot  # noqa: F401  (the browser fixture)

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def page(chromium, server):  # noqa: F811
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def admin_user(transactional_db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="root", password="root-password", is_staff=True,
                                                is_superuser=True)


def admin_sign_in(page, server) -> None:
    page.goto(f"{server.url}/admin/login/?next=/admin/policy_app/policy/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "root-password")
    page.click("input[type=submit]")
    page.wait_for_url(f"{server.url}/admin/policy_app/policy/")


def fill_policy(page, *, providers: str = "", ceilings: str = "", group: str | None = None,
                sharing: str | None = None, max_steps: str = "") -> None:
    if group is not None:
        page.select_option("#id_group", label=group)
    page.fill("#id_allowed_providers", providers)
    page.fill("#id_permission_ceilings", ceilings)
    if sharing is not None:
        page.select_option("#id_sharing_allowed", sharing)
    page.fill("#id_max_steps", max_steps)
    page.click("input[name=_save]")


def test_an_administrator_sets_policies_and_reads_a_persons_effective_one(page, server, admin_user, bob):
    from django.contrib.auth.models import Group

    bob.user.groups.add(Group.objects.create(name="contractors"))
    admin_sign_in(page, server)

    page.goto(f"{server.url}/admin/policy_app/policy/add/")
    fill_policy(page, providers="anthropic\nfake\nnosuchprovider", ceilings="bsh: ask", max_steps="20")
    expect(page.locator(".errorlist")).to_contain_text("bsh is no permission")
    fill_policy(page, providers="anthropic\nfake\nnosuchprovider", ceilings="bash: ask\nwebfetch: deny",
                max_steps="20")
    expect(page.locator(".messagelist .warning")).to_contain_text("provider nosuchprovider")
    expect(page.locator(".policy-flags")).to_contain_text("nosuchprovider")

    page.goto(f"{server.url}/admin/policy_app/policy/add/")
    fill_policy(page, group="contractors", ceilings="bash: deny", sharing="false", max_steps="50")
    expect(page.locator(".messagelist .success")).to_be_visible()

    page.click("a.effective-policy-link")
    page.select_option("#id_user", label="bob")
    page.click("#effective-form input[type=submit]")
    rows = page.locator("#effective-rows tbody tr")
    bash = rows.filter(has_text="Permission bash")
    expect(bash).to_contain_text("at least deny")
    expect(bash).to_contain_text("policy of group 'contractors'")
    expect(rows.filter(has_text="Most steps per turn")).to_contain_text("policy of everyone")
    expect(rows.filter(has_text="Sharing sessions")).to_contain_text("not allowed")
    expect(page.locator("#effective-scopes")).to_contain_text("bash: ask")
    screenshot(page, "policy-effective")

    (bob.repo / "opencode.json").write_text('{"permission": {"bash": "allow"}, "share": "auto"}')
    config = bob.get("/config", params={"directory": str(bob.repo)}).json()
    assert config["permission"]["bash"] == "deny" and config["share"] == "disabled"
    assert config["enabled_providers"] == ["anthropic", "fake", "nosuchprovider"]

    page.context.clear_cookies()
    page.goto(f"{server.url}/signin?next=/account")
    page.fill("#id_username", "bob")
    page.fill("#id_password", "bob-password")
    page.click("#signin-form button[type=submit]")
    page.wait_for_url(f"{server.url}/account")
    managed = page.locator("#policy")
    expect(managed).to_contain_text("Managed by your organization")
    expect(managed.locator("tr", has_text="Permission bash")).to_contain_text("policy of group 'contractors'")
    expect(managed.locator("tr", has_text="Permission webfetch")).to_contain_text("at least deny")
    screenshot(page, "policy-account")
