"""A real browser (headless Chromium over the DevTools protocol) logs in to the admin, adds an auth account,
and sees only the masked key; a screenshot is saved under test-artifacts/."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.auth import get_user_model

from auth_app.accounts import active_credential
from auth_app.models import AuthAccount

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SECRET = "sk-browser-SECRET-9f8e7d6c5b4a3210"



@pytest.fixture(autouse=True)
def chromium_installed():
    # Never a skip: scripts/test.sh installs Debian's chromium, so a missing browser is a broken set-up.
    assert CHROMIUM is not None, "chromium is missing: scripts/test.sh installs Debian's package"


class Page:
    """Just enough of the DevTools protocol: evaluate JavaScript, navigate, screenshot."""

    def __init__(self, ws_url: str):
        from websockets.sync.client import connect

        self._connection = connect(ws_url, max_size=50 * 1024 * 1024, open_timeout=20)
        self.ws = self._connection.__enter__()
        self.next_id = 0

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result["result"].get("value")

    def wait_for(self, predicate: str, timeout: float = 20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.js(predicate):
                    return
            except RuntimeError:
                pass  # the page is navigating
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {predicate}; at {self.js('location.href')}")

    def close(self):
        self._connection.__exit__(None, None, None)


@pytest.fixture
def browser():
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    process = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--remote-debugging-port=0",
         "--window-size=1280,900", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                port = int(match.group(1))
            elif not line and process.poll() is not None:
                break
        assert port, "chromium did not open its DevTools port"
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        page.call("Page.enable")
        yield page
        page.close()
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(profile, ignore_errors=True)


def test_admin_adds_an_auth_account_and_shows_only_the_mask(server, transactional_db, browser):
    admin = get_user_model().objects.create_user(username="boss", password="boss-password-1", is_staff=True,
                                                 is_superuser=True)
    page = browser
    page.call("Page.navigate", url=f"{server.url}/admin/login/?next=/admin/auth_app/authaccount/add/")
    page.wait_for("document.readyState === 'complete' && !!document.querySelector('#id_username')")
    page.js("""document.querySelector('#id_username').value = 'boss';
               document.querySelector('#id_password').value = 'boss-password-1';
               document.querySelector('#login-form').submit(); true""")
    page.wait_for("location.pathname.endsWith('/authaccount/add/') && document.readyState === 'complete'"
                  " && !!document.querySelector('#id_secret')")
    assert page.js("document.querySelector('#id_secret').type") == "password"
    page.js(f"""document.querySelector('#id_owner').value = '{admin.pk}';
               document.querySelector('#id_service_id').value = 'openai';
               document.querySelector('#id_description').value = 'browser key';
               document.querySelector('#id_secret').value = '{SECRET}';
               document.querySelector('#id_make_active').checked = true;
               document.querySelector('input[name=_continue]').click(); true""")
    page.wait_for("/\\/authaccount\\/acc_[^/]+\\/change\\/$/.test(location.pathname)"
                  " && document.readyState === 'complete'")

    account = AuthAccount.objects.get(owner=admin)
    assert active_credential(admin, "openai") == {"type": "api", "key": SECRET}
    assert SECRET not in account.ciphertext

    dom = page.js("document.documentElement.outerHTML")
    assert "sk-…3210" in dom
    assert SECRET not in dom
    assert page.js("document.querySelector('#id_secret').value") == ""
    ARTIFACTS.mkdir(exist_ok=True)
    page.call("Emulation.setDeviceMetricsOverride", width=1280, height=1300, deviceScaleFactor=1, mobile=False)
    shot = page.call("Page.captureScreenshot", format="png")["data"]
    import base64

    (ARTIFACTS / "admin-auth-account.png").write_bytes(base64.b64decode(shot))

    page.call("Page.navigate", url=f"{server.url}/admin/auth_app/authaccount/")
    page.wait_for("location.pathname.endsWith('/authaccount/') && document.readyState === 'complete'")
    listing = page.js("document.documentElement.outerHTML")
    assert "sk-…3210" in listing and SECRET not in listing
    assert SECRET not in server.log()
    assert os.path.getsize(ARTIFACTS / "admin-auth-account.png") > 1000
