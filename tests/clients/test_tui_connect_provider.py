"""opencode's TUI "connect a provider" (1.18.33, the `/connect` dialog) driven in tmux: choosing Anthropic,
"Manually enter API Key" and typing a key sends PUT /auth/anthropic; the provider is then connected for that
user only (GET /provider), and the TUI goes on to its model list. Screens land in test-artifacts/clients/."""
import pytest

from tests.clients.conftest import attach_args, server_requests
from tests.clients.tui import Tui

pytestmark = [pytest.mark.skipif(not Tui.available(), reason="tmux is not installed"),
              pytest.mark.long_running(seconds=20)]  # scheduled before shorter files (tests/conftest.py)

API_KEY = "sk-tui-connect-0123456789abcdef"


@pytest.fixture
def tui(server, alice, llm, opencode_bin, client_env, tmp_path):
    env = {**client_env, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    session = Tui([opencode_bin, "attach", *attach_args(server, alice)], env, alice.repo, tmp_path / "tui-stderr.txt")
    yield session
    session.close()


def test_connecting_a_provider_with_an_api_key(server, alice, bob, llm, tui):
    from auth_app.accounts import active_credential
    from auth_app.models import AuthAccount

    tui.wait_for("Ask anything")
    assert "anthropic" not in alice.get("/provider").json()["connected"]
    before = len(server_requests(server))
    tui.type("/connect")
    tui.wait_for("/connect")
    tui.press("Enter")
    tui.wait_for("Connect a provider")
    tui.type("anthropic")
    tui.wait_for("Anthropic (API key)")
    tui.press("Enter")
    tui.wait_for("Select auth method")
    tui.type("Manually")
    tui.wait_for("Manually enter API Key")
    tui.press("Enter")
    tui.wait_for("API key")
    tui.save("tui-connect-key")
    tui.type(API_KEY)
    tui.press("Enter")
    tui.wait_for("Claude")  # connected: the TUI offers the provider's models
    tui.save("tui-connect-models")

    requests = server_requests(server)[before:]
    assert ("PUT /auth/anthropic", 200) in requests
    assert [(r, s) for r, s in requests if s >= 400] == []
    assert "anthropic" in alice.get("/provider").json()["connected"]
    assert "anthropic" not in bob.get("/provider").json()["connected"]
    assert active_credential(alice.user, "anthropic") == {"type": "api", "key": API_KEY}
    assert API_KEY not in AuthAccount.objects.get(owner=alice.user, service_id="anthropic").ciphertext
