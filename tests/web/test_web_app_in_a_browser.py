"""A person in chromium: the sign-in page at /, a refused wrong password, then opencode's web app on this
server's own origin, working through the signed-in session alone (no token typed): a prompt streams, the
permission dock's "Allow once" runs the tool, the review panel shows the file it wrote, the terminal runs
`echo`, a provider is connected with an API key, and signing out ends the session. Every request the app
made is logged (test-artifacts/web-app-requests.txt) and none failed."""
from __future__ import annotations

import re
import sys
import time

import httpx
import pytest
from playwright.sync_api import expect

from tests.fakes.fixtures import configure_fake_provider
from tests.fakes.llm import Reply
from tests.web.conftest import ARTIFACTS, FIRST_ANSWER_MS, SAME_ORIGIN, RequestLog, TerminalFrames, screenshot

pytestmark = [pytest.mark.timeout(240),
              pytest.mark.long_running(seconds=45)]  # scheduled before shorter files (tests/conftest.py)
VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture
def page(chromium, server, web_app_copy):
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def agent(alice, fake_llm):
    """alice's default model is the fake; bash and edits ask first, as the permission dock needs."""
    from projects_app.models import UserConfig

    configure_fake_provider(alice, fake_llm)
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "permission": {"edit": "ask", "bash": "ask"}}
    config.save(update_fields=["data"])
    return fake_llm


def sign_in(page, server, username: str = "alice", password: str = "alice-password") -> None:
    page.goto(f"{server.url}/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#signin-form button[type=submit]")


def open_new_session(page) -> None:
    """Home → Add project → the persona's repo → New session."""
    page.get_by_text("Add project").first.click()
    page.get_by_text("~/repo/").first.click()
    page.get_by_role("button", name="New session").last.click()
    expect(page.locator("[contenteditable=true]").first).to_be_visible()
    expect(page.get_by_role("button", name="Fake Model")).to_be_visible()  # the model is chosen: prompts may go


def prompt(page, text: str) -> None:
    page.locator("[contenteditable=true]").first.click()
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def session_cookie(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "sessionid")


def test_signed_out_root_shows_the_sign_in_page(page, server):
    page.goto(f"{server.url}/")
    assert page.url == f"{server.url}/signin"
    expect(page.get_by_role("heading", name="Sign in to agentserver")).to_be_visible()
    assert page.locator("input[name=csrfmiddlewaretoken]").count() == 1
    screenshot(page, "sign-in")


def test_a_wrong_password_is_refused_and_opens_no_session(page, server, alice):
    from django.contrib.sessions.models import Session

    sign_in(page, server, password="not-her-password")
    expect(page.locator("#signin-error")).to_have_text("Wrong username or password.")
    assert page.url.startswith(f"{server.url}/signin")
    assert "sessionid" not in {c["name"] for c in page.context.cookies()}
    assert Session.objects.count() == 0
    page.goto(f"{server.url}/")
    assert page.url == f"{server.url}/signin"


def test_the_web_app_streams_a_prompt_runs_an_allowed_tool_and_reviews_its_diff(page, server, alice, agent):
    log = RequestLog(page, server.url)
    sign_in(page, server)
    page.wait_for_url(f"{server.url}/")
    expect(page.get_by_text("Add project").first).to_be_visible()
    assert page.evaluate("location.origin") == server.url
    assert page.evaluate("localStorage.getItem('opencode.settings.dat:defaultServerUrl')") is None
    screenshot(page, "web-app-home")

    open_new_session(page)
    words = "Streaming from the fake model one word at a time until the very last word arrives".split()
    agent.script(Reply(text=" ".join(words), delay=0.3))
    prompt(page, "say hello")
    expect(page.get_by_text(" ".join(words[:3]), exact=False)).to_be_visible()
    assert page.get_by_text(" ".join(words), exact=True).count() == 0, "the answer arrived whole, not streamed"
    expect(page.get_by_text(" ".join(words), exact=True)).to_be_visible()
    screenshot(page, "session")

    agent.script(Reply(tool_calls=[("bash", {"command": "printf 'one\\ntwo\\n' > notes.txt && echo wrote",
                                             "description": "Write notes"})]),
                 Reply(text="I wrote notes.txt."))
    prompt(page, "write a file")
    allow = page.get_by_role("button", name="Allow once")
    expect(allow).to_be_visible()
    screenshot(page, "permission-dock")
    assert not (alice.repo / "notes.txt").exists()
    allow.click()
    expect(page.get_by_text("I wrote notes.txt.")).to_be_visible()
    assert (alice.repo / "notes.txt").read_text() == "one\ntwo\n"

    page.get_by_role("button", name="Toggle review").click()
    review = page.get_by_role("complementary", name="Review and files")
    expect(review).to_be_visible()
    expect(review.get_by_text("Files Changed")).to_be_visible()
    review.get_by_text("Files Changed").click()
    expect(review.get_by_role("button", name=re.compile("notes.txt")).first).to_be_visible()
    expect(review.get_by_text("one", exact=True).first).to_be_visible()
    expect(review.get_by_text("two", exact=True).first).to_be_visible()
    screenshot(page, "review")

    log.write(ARTIFACTS / "web-app-requests.txt")
    assert log.failures() == [], log.failures()
    assert all(not url.startswith("/api/") or status == 200 for _, url, status in log.entries)


def test_the_terminal_panel_runs_echo_on_the_same_origin(page, server, alice, agent):
    sign_in(page, server)
    open_new_session(page)
    prompt(page, "hi")
    expect(page.get_by_text("Hello from the fake LLM.")).to_be_visible(timeout=FIRST_ANSWER_MS)
    terminal = TerminalFrames(page)
    terminal.run("echo hi-from-term-$((6*7))")
    assert terminal.wait_for("hi-from-term-42"), terminal.received[-5:]
    page.wait_for_timeout(300)
    screenshot(page, "terminal")


def test_a_provider_is_connected_with_an_api_key(page, server, alice, agent):
    sign_in(page, server)
    open_new_session(page)
    page.get_by_role("button", name="Fake Model").click()
    page.get_by_text("Manage models").click()
    page.get_by_role("button", name="Connect provider").first.click()
    page.get_by_role("button", name="Groq", exact=True).first.click()
    key_field = page.get_by_placeholder("API key")
    expect(key_field).to_be_visible()
    key_field.fill("gsk-browser-test-key-0123456789")
    screenshot(page, "connect-provider")
    key_field.press("Enter")
    deadline = time.monotonic() + 20
    providers = {}
    while time.monotonic() < deadline:
        providers = alice.get("/provider").json()
        if "groq" in providers["connected"]:
            break
        time.sleep(0.2)
    assert "groq" in providers["connected"]
    groq = next(p for p in providers["all"] if p["id"] == "groq")
    default = groq["models"][providers["default"]["groq"]]
    assert default["tool_call"] and "whisper" not in default["id"]
    account = alice.get("/api/auth", params={"directory": str(alice.repo)}).json()
    assert "gsk-browser-test-key-0123456789" not in str(account)


def test_signing_out_ends_the_session(page, server, alice):
    sign_in(page, server)
    page.wait_for_url(f"{server.url}/")
    cookie = session_cookie(page)
    with httpx.Client(base_url=server.url, cookies={"sessionid": cookie}, timeout=30) as old:
        assert old.get("/session", headers=SAME_ORIGIN).status_code == 200
        page.goto(f"{server.url}/account")
        page.click("#signout")
        page.wait_for_url(f"{server.url}/signin")
        assert old.get("/session", headers=SAME_ORIGIN).status_code == 401
        assert old.get("/global/event", headers=SAME_ORIGIN).status_code == 401
    page.goto(f"{server.url}/")
    assert page.url == f"{server.url}/signin"


def test_the_account_page_creates_a_token_shown_once(page, server, alice):
    sign_in(page, server)
    page.wait_for_url(f"{server.url}/")
    page.goto(f"{server.url}/account")
    page.fill("#id_token_name", "laptop")
    page.click("#create-token")
    secret = page.locator("#token-secret").inner_text().strip()
    assert secret.startswith("as_")
    expect(page.locator("#cmd-attach")).to_contain_text(f"-u alice -p {secret}")
    screenshot(page, "account")
    assert httpx.get(f"{server.url}/session", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    page.goto(f"{server.url}/account")
    expect(page.get_by_text("laptop")).to_be_visible()
    assert secret not in page.content()


def test_the_todo_and_question_docks_mcp_toggles_and_share_answer(page, server, alice, agent):
    from projects_app.models import UserConfig

    from tests.mcp.conftest import FAKE_SERVER

    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "mcp": {"calc": {"type": "local", "command": [sys.executable, FAKE_SERVER]}}}
    config.save(update_fields=["data"])
    log = RequestLog(page, server.url)
    sign_in(page, server)
    open_new_session(page)
    todos = [{"content": "Read the code", "status": "completed", "priority": "high", "id": "1"},
             {"content": "Write the fix", "status": "in_progress", "priority": "high", "id": "2"}]
    question = {"question": "Which color?", "header": "Color",
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}
    # The todo dock shows while the agent works; the question dock takes its place when it asks.
    agent.script(Reply(tool_calls=[("todowrite", {"todos": todos})]),
                 Reply(text="Thinking it over. " * 4, delay=0.25, tool_calls=[("question", {"questions": [question]})]),
                 Reply(text="Blue it is."))
    prompt(page, "plan, then ask me")
    expect(page.get_by_text("Write the fix", exact=True).filter(visible=True).first).to_be_visible()
    screenshot(page, "todo-dock")
    expect(page.get_by_text("Which color?")).to_be_visible(timeout=30_000)
    screenshot(page, "question-dock")
    page.get_by_text("Blue", exact=True).click()
    with page.expect_response(lambda r: re.search(r"/question/que_\w+/reply", r.url)) as replied:
        page.get_by_role("button", name="Submit").click()
    assert replied.value.status == 200
    expect(page.get_by_text("Blue it is.")).to_be_visible()

    page.locator("[contenteditable=true]").first.click()
    page.keyboard.press("Control+;")
    expect(page.get_by_role("button", name="calc connected")).to_be_visible()
    with page.expect_response(lambda r: r.url.endswith("/mcp/calc/disconnect")) as disconnected:
        page.get_by_role("button", name="calc connected").click()
    assert disconnected.value.status == 200
    disabled = page.get_by_role("button", name="calc disabled")
    expect(disabled).to_be_visible()
    # The dialog's toggle stays busy until its status list has been fetched again, and drops a click until
    # then (the switch is disabled meanwhile): the status shows a moment before the switch is free.
    expect(disabled.locator("[data-slot=switch-input]")).to_be_enabled()
    with page.expect_response(lambda r: r.url.endswith("/mcp/calc/connect")) as connected:
        disabled.click()
    assert connected.value.status == 200
    expect(page.get_by_role("button", name="calc connected")).to_be_visible()
    page.get_by_role("button", name="Close").click()

    page.get_by_role("button", name="More options").first.click()
    page.get_by_role("menuitem", name="Share...").click()
    with page.expect_response(lambda r: r.url.endswith("/share") and r.request.method == "POST") as published:
        page.get_by_role("button", name="Publish").click()
    assert published.value.status == 200
    expect(page.get_by_role("button", name="Unpublish")).to_be_visible()
    shared = alice.get("/session", params={"directory": str(alice.repo)}).json()[0]
    assert shared["share"]["url"].startswith(server.url)
    assert httpx.get(shared["share"]["url"]).status_code == 200

    log.write(ARTIFACTS / "web-app-requests-docks.txt")
    assert log.failures() == [], log.failures()
