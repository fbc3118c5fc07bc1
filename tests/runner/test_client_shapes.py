"""What the stock opencode 1.18.33 clients see after a prompt, as the reference does it: token totals on
step-finish parts and completed assistant messages and the session's model variant (transcripts/events-tool-call.*),
a title even after a `!cmd` shell run, and an attached text file (`run -f`) sent to the model once."""
import base64

from tests.fakes.fixtures import FAKE_MODEL, FAKE_PROVIDER, Reply
from tests.runner.conftest import text_prompt, wait_until


def test_step_finish_and_assistant_tokens_carry_a_total(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="counted", usage={"input": 100, "output": 20, "reasoning": 3, "cache_read": 7,
                                            "cache_write": 0}))
    body = alice.post(f"/session/{session['id']}/message", json=text_prompt("count")).json()
    finish = body["parts"][-1]
    assert finish["type"] == "step-finish"
    tokens = finish["tokens"]
    assert set(tokens) == {"total", "input", "output", "reasoning", "cache"}
    assert tokens["total"] == tokens["input"] + tokens["output"] + tokens["reasoning"] + \
        tokens["cache"]["read"] + tokens["cache"]["write"]
    assert body["info"]["tokens"] == tokens


def test_the_session_model_names_its_variant(alice, llm, session_of):
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("hi"))
    model = alice.get(f"/session/{session['id']}").json()["model"]
    assert model == {"id": FAKE_MODEL, "providerID": FAKE_PROVIDER, "variant": "default"}


def test_a_shell_run_first_does_not_keep_the_session_from_its_title(alice, llm, session_of):
    """The TUI's `!ls` before the first prompt adds an all-synthetic user message; the title still comes."""
    session = session_of()
    assert alice.post(f"/session/{session['id']}/shell", json={"agent": "build", "command": "true"}).status_code == 200
    alice.post(f"/session/{session['id']}/message", json=text_prompt("now a real prompt"))
    assert wait_until(lambda: alice.get(f"/session/{session['id']}").json()["title"] == "Fake session title")


def test_an_attached_text_file_reaches_the_model_once(alice, llm, session_of):
    """`opencode run "..." -f notes.txt` sends the file inline as a data: URL; the model sees its text once."""
    session = session_of()
    encoded = base64.b64encode(b"attached body 42\n").decode()
    body = {"parts": [{"type": "text", "text": "summarize"},
                      {"type": "file", "mime": "text/plain", "url": f"data:text/plain;base64,{encoded}",
                       "filename": "notes.txt"}]}
    assert alice.post(f"/session/{session['id']}/message", json=body).status_code == 200
    prompt = [r for r in llm.requests if "title generator" not in r.system_text.lower()][0]
    assert str(prompt.body["messages"]).count("attached body 42") == 1
