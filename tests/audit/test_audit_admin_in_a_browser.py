"""The admin's audit log in a real browser (Debian's chromium driven by Playwright): a staff member signs in,
sees their own sign-in at the top of the list, narrows it by action, outcome and free text (the search box is
the API's `q`), opens a record's detail and follows it to the person's timeline; a person who is not staff is
kept out."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from audit_app.models import AuditRecord
from tests.web.conftest import screenshot

pytestmark = pytest.mark.timeout(180)
LIST = "/admin/audit_app/auditrecord/"


@pytest.fixture
def page(chromium, server):
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    yield page
    context.close()


def _sign_in(page, server, username: str, password: str) -> None:
    page.goto(f"{server.url}/admin/login/?next={LIST}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")


def test_staff_filter_the_audit_log_and_open_a_record(page, server, alice, transactional_db):
    get_user_model().objects.create_user(username="root", password="root-password", is_staff=True,
                                         is_superuser=True)
    _sign_in(page, server, "root", "wrong-password")  # a failed sign-in to find
    _sign_in(page, server, "root", "root-password")
    page.wait_for_url(f"{server.url}{LIST}")
    rows = page.locator("#result_list tbody tr")
    expect(rows.first).to_contain_text("auth.signin")
    expect(rows.first).to_contain_text("root")

    page.get_by_role("link", name="auth.signin_failed").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("failure")
    screenshot(page, "audit-log-filtered")

    page.goto(f"{server.url}{LIST}")
    page.fill("#searchbar", "alice")
    page.press("#searchbar", "Enter")
    expect(rows.first).to_contain_text("token.created")
    expect(page.locator("#result_list")).not_to_contain_text("auth.signin_failed")
    page.fill("#searchbar", "token.created alice")  # the API's free text: the action's words too, each term found
    page.press("#searchbar", "Enter")
    expect(rows.first).to_contain_text("token.created")
    expect(page.locator("#result_list")).not_to_contain_text("auth.signin")

    page.goto(f"{server.url}{LIST}?action=auth.signin")
    rows.first.locator("th a").click()
    expect(page.locator("body")).to_contain_text("/admin/login/")  # its details
    expect(page.locator("body")).to_contain_text("Prev hash")
    screenshot(page, "audit-record")
    page.get_by_role("link", name="everything root did").click()
    expect(rows).to_have_count(AuditRecord.objects.filter(actor_name="root").exclude(actor_person=None).count())
    expect(page.locator("#result_list")).not_to_contain_text("token.created")


def test_a_person_who_is_not_staff_cannot_open_the_audit_log(page, server, alice, transactional_db):
    _sign_in(page, server, "alice", "alice-password")  # the admin's login refuses her outright
    expect(page.locator("body")).to_contain_text("for a staff account")
    page.goto(f"{server.url}/signin")  # signed in as herself, on the sign-in page, the admin still refuses
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password")
    page.click("#signin-form button[type=submit]")
    page.wait_for_url(f"{server.url}/")
    page.goto(f"{server.url}{LIST}")
    assert "/admin/login/" in page.url
    expect(page.locator("body")).not_to_contain_text("auth.signin")
