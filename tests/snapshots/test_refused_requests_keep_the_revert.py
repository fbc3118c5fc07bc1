"""A prompt, command or shell that is refused (an unknown agent or model, a file part that cannot be read)
leaves every row and file as it was: a staged revert stays staged, so unrevert still brings the files back,
and nothing the request would have run has run."""
import pytest

from projects_app.models import UserConfig
from tests.snapshots.conftest import messages_of, text_prompt

TEXT = [{"type": "text", "text": "go on"}]


def missing_file(persona) -> dict:
    return {"type": "file", "mime": "text/plain", "filename": "missing.txt",
            "url": f"file://{persona.repo / 'missing.txt'}"}


def outside_roots() -> dict:
    return {"type": "file", "mime": "text/plain", "filename": "passwd", "url": "file:///etc/passwd"}


def add_command(persona, name: str, **command) -> None:
    config, _ = UserConfig.objects.get_or_create(user=persona.user)
    data = dict(config.data or {})
    data["command"] = {**(data.get("command") or {}), name: command}
    config.data = data
    config.save(update_fields=["data"])


# (route, body) of each refused request; `persona` is filled in by the test.
REFUSED = {
    "prompt with an unknown agent": ("/session/{id}/message", lambda p: text_prompt("go", agent="nobody")),
    "prompt with an unknown model": (
        "/session/{id}/message", lambda p: text_prompt("go", model={"providerID": "fake", "modelID": "nope"})),
    "prompt with a missing file": ("/session/{id}/message", lambda p: {"parts": [*TEXT, missing_file(p)]}),
    "prompt with a file outside the roots": ("/session/{id}/message", lambda p: {"parts": [*TEXT, outside_roots()]}),
    "prompt_async with an unknown agent": ("/session/{id}/prompt_async", lambda p: text_prompt("go", agent="nobody")),
    "noReply prompt with an unknown model": (
        "/session/{id}/message",
        lambda p: text_prompt("go", noReply=True, model={"providerID": "fake", "modelID": "nope"})),
    "v2 prompt with an unknown agent": ("/api/session/{id}/prompt", lambda p: {"prompt": text_prompt("go",
                                                                                                     agent="nobody")}),
    "v2 prompt with a missing file": ("/api/session/{id}/prompt", lambda p: {"prompt": {"parts": [
        *TEXT, missing_file(p)]}}),
    "command with an unknown model": ("/session/{id}/command", lambda p: {"command": "touchy", "arguments": "",
                                                                          "model": "fake/nope"}),
    "command with an unknown agent": ("/session/{id}/command", lambda p: {"command": "touchy", "arguments": "",
                                                                          "agent": "nobody"}),
    "command with a missing file": ("/session/{id}/command", lambda p: {"command": "touchy", "arguments": "",
                                                                        "parts": [missing_file(p)]}),
    "subtask command with an unknown model": (
        "/session/{id}/command", lambda p: {"command": "delegate", "arguments": "", "model": "fake/nope"}),
    "shell with an unknown agent": ("/session/{id}/shell", lambda p: {"agent": "nobody", "command": "touch ran.txt"}),
    "shell with an unknown model": ("/session/{id}/shell", lambda p: {
        "agent": "build", "command": "touch ran.txt", "model": {"providerID": "fake", "modelID": "nope"}}),
}


def everything(persona, session_id: str) -> dict:
    files = {name: (persona.repo / name).read_text() if (persona.repo / name).exists() else None
             for name in ("README.md", "new.txt", "ran.txt")}
    session = persona.get(f"/session/{session_id}").json()
    return {"files": files, "session": session,
            "messages": messages_of(persona, session_id)}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_request_leaves_every_row_and_file_as_it_was(alice, session_of, edit_turn, case):
    # A template that would change a file if it ran: a refused command must not get that far.
    add_command(alice, "touchy", template="Hello !`touch ran.txt`")
    add_command(alice, "delegate", template="Look around !`touch ran.txt`", agent="general", subtask=True)
    session = session_of()
    edit_turn(session["id"])
    user_id = messages_of(alice, session["id"])[0]["info"]["id"]
    assert alice.post(f"/session/{session['id']}/revert", json={"messageID": user_id}).status_code == 200
    before = everything(alice, session["id"])
    assert before["session"]["revert"]["messageID"] == user_id and before["files"]["new.txt"] is None

    route, body = REFUSED[case]
    response = alice.post(route.format(id=session["id"]), json=body(alice))
    assert 400 <= response.status_code < 500, response.text
    assert set(response.json()) == {"name", "data"} and response.json()["data"]["message"]
    assert everything(alice, session["id"]) == before

    unreverted = alice.post(f"/session/{session['id']}/unrevert")
    assert unreverted.status_code == 200, unreverted.text
    assert (alice.repo / "new.txt").read_text() == "fresh\n"
    assert (alice.repo / "README.md").read_text() == "bye\nworld\nagain\n"
