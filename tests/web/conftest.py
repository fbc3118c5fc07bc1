"""The browser's front door: a real chromium (Debian's, driven by Playwright's Python package), the web app
copied out of the opencode binary, signing in over HTTP, and the screenshots the README shows.

Screenshots and the request log go to test-artifacts/ (never into the checkout's docs/):
`scripts/screenshots.sh` runs the browser tests and copies the pictures to docs/screenshots/."""
from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, TLS

ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]
# A fresh server's first answer pays for what a worker loads once (the model SDK's import, the TLS context,
# the sandbox, the project's snapshot repository): about a second on a quiet machine, and more than the
# 5 s default once in CI beside another worker's browser.
FIRST_ANSWER_MS = 30_000
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(scope="session")
def web_app_copy() -> Path:
    """The copy the server serves (scripts/setup.sh makes it; made here if a developer skipped set-up)."""
    from django.conf import settings

    from web_app.install import install, opencode_binary

    target = Path(settings.WEB_APP_DIR)
    if not (target / "index.html").exists():
        binary = opencode_binary()
        assert binary is not None, "no opencode binary: run scripts/setup.sh (it installs opencode-ai with npm)"
        install(binary=binary, target=target, expect_version=settings.WEB_APP_VERSION)
    return target


@pytest.fixture
def chromium(transactional_db):
    """A browser for one test. Playwright's sync API keeps an event loop running on this thread while it is
    started, and Django refuses database calls beside a running loop; the test's own ORM calls (no loop of
    its own is involved) are allowed for as long as the browser runs, and the database is flushed after."""
    from playwright.sync_api import expect, sync_playwright

    # An assertion waits as long as an action does (the pages set 30 s): playwright's own 5 s was too short
    # on a loaded machine for what crosses processes (an MCP server reconnecting, in the web app's dialog).
    expect.set_options(timeout=30_000)
    assert shutil.which(CHROMIUM), "chromium is missing: scripts/test.sh installs Debian's package"
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "1"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            yield browser
            browser.close()
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


class RequestLog:
    """Every request a page made (method, path and query, status), assets aside, in order."""

    def __init__(self, page, base_url: str):
        self.base_url = base_url
        self.entries: list[tuple[str, str, int | str]] = []
        page.on("response", self._response)
        page.on("requestfailed", lambda request: self.entries.append(
            (request.method, self._short(request.url), f"failed: {request.failure}")))
        page.on("websocket", lambda ws: self.entries.append(("WEBSOCKET", self._short(ws.url), "opened")))

    def _short(self, url: str) -> str:
        return re.sub(r"^(https?|wss?)://127\.0\.0\.1:\d+", "", url)

    def _response(self, response) -> None:
        if "/assets/" not in response.url:
            self.entries.append((response.request.method, self._short(response.url), response.status))

    def failures(self) -> list:
        return [e for e in self.entries if not isinstance(e[2], int) or e[2] >= 400]

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{status}\t{method} {url}\n" for method, url, status in self.entries))


class TerminalFrames:
    """What the page's WebSockets received (the terminal's output), to wait on while the panel draws it."""

    def __init__(self, page):
        self.page = page
        self.received: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, frame) -> None:
        self.received.append(frame if isinstance(frame, str) else frame.decode("utf-8", "replace"))

    def wait_for(self, text: str, timeout: float = 20) -> bool:
        deadline = time.monotonic() + timeout
        while not any(text in chunk for chunk in self.received) and time.monotonic() < deadline:
            self.page.wait_for_timeout(200)
        return any(text in chunk for chunk in self.received)

    def run(self, command: str) -> None:
        """Open the terminal panel (ctrl+`), wait for the shell's prompt, type `command`."""
        from playwright.sync_api import expect

        self.page.mouse.click(700, 400)
        self.page.keyboard.press("Control+Backquote")
        terminal = self.page.locator("textarea[aria-label='Terminal input']")
        expect(terminal).to_be_attached()
        self.wait_for("$")
        terminal.focus()
        self.page.keyboard.type(command + "\n")


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def sign_in_form(client: httpx.Client, username: str, password: str, *, next_path: str = "/",
                 address_headers: dict | None = None) -> httpx.Response:
    """Sign in as a browser would: fetch the form (and its CSRF cookie), post it back."""
    page = client.get("/signin", params={"next": next_path}, headers={"Accept": "text/html"})
    token = _CSRF.search(page.text).group(1)
    return client.post("/signin", data={"username": username, "password": password, "next": next_path,
                                        "csrfmiddlewaretoken": token},
                       headers={"Origin": str(client.base_url).rstrip("/"), **(address_headers or {})})


def csrf_of(html: str) -> str:
    return _CSRF.search(html).group(1)


SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}


@pytest.fixture
def browser_client(server):
    """An HTTP client that keeps cookies, as a browser tab would."""
    with httpx.Client(base_url=server.url, timeout=60, verify=TLS) as client:
        yield client


@pytest.fixture
def alice_cookies(alice, browser_client) -> httpx.Client:
    """alice signed in through the form: the client holds her session cookie."""
    response = sign_in_form(browser_client, "alice", "alice-password")
    assert response.status_code == 302, response.text
    return browser_client
