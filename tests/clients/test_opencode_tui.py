"""The stock terminal UI, `opencode attach URL` (1.18.33), against our server, driven through tmux: it starts
(it dies without GET /agent), shows the configured model, sends a prompt and shows the fake's answer, answers a
permission dialog with "Allow once", and Esc Esc aborts a streaming reply. Screens land in
test-artifacts/clients/tui-*.txt."""
import pytest

from tests.clients.conftest import attach_args, server_requests
from tests.clients.tui import Tui
from tests.fakes.fixtures import Reply

pytestmark = pytest.mark.skipif(not Tui.available(), reason="tmux is not installed")


@pytest.fixture
def tui(server, alice, llm, opencode_bin, client_env, tmp_path):
    env = {**client_env, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    session = Tui([opencode_bin, "attach", *attach_args(server, alice)], env, alice.repo, tmp_path / "tui-stderr.txt")
    yield session
    session.close()


def test_it_starts_prompts_and_shows_the_answer(server, alice, llm, tui):
    screen = tui.wait_for("Ask anything")
    tui.save("tui-startup")
    assert "Fake Model" in screen
    llm.script(Reply(text="Greetings from the fake provider in the TUI."))
    tui.type("say hi")
    tui.press("Enter")
    tui.wait_for("Greetings from the fake provider in the TUI.")
    tui.wait_for("Fake session title")
    tui.save("tui-answer")
    failed = [(r, s) for r, s in server_requests(server) if s >= 500]  # none, in this whole session
    assert failed == []


def test_a_permission_dialog_is_answered_allow_once(server, alice, llm, tui):
    tui.wait_for("Ask anything")
    before = len(server_requests(server))
    target = alice.repo / "tui_file.txt"
    llm.script(Reply(tool_calls=[("write", {"filePath": str(target), "content": "from the tui\n"})]),
               Reply(text="Wrote the file for you."))
    tui.type("write the file")
    tui.press("Enter")
    tui.wait_for("Permission required")
    # The dialog draws its title a frame before its choices: the choices must follow, and Enter waits for them.
    assert "Allow once" in tui.wait_for("Allow once", timeout=10)
    tui.save("tui-permission")
    tui.press("Enter")
    tui.wait_for("Wrote the file for you.")
    tui.save("tui-permission-allowed")
    assert target.read_text() == "from the tui\n"
    replies = [(r, s) for r, s in server_requests(server)[before:] if r.startswith("POST /permission/per_")]
    assert len(replies) == 1 and replies[0][1] == 200
    assert alice.get("/permission").json() == []


def test_escape_twice_aborts_a_streaming_reply(server, alice, llm, tui):
    tui.wait_for("Ask anything")
    before = len(server_requests(server))
    llm.script(Reply(text=" ".join(f"tick{n}" for n in range(1, 80)), delay=0.25))
    tui.type("stream slowly")
    tui.press("Enter")
    tui.wait_for("tick3")
    tui.press("Escape", "Escape")
    tui.wait_for("interrupted")
    tui.save("tui-aborted")
    assert "tick79" not in tui.screen()
    aborts = [(r, s) for r, s in server_requests(server)[before:] if r.startswith("POST /session/ses_") and "/abort" in r]
    assert aborts and all(s == 200 for _, s in aborts)
