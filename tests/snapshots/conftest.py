import subprocess

import pytest

from tests.fakes.fixtures import Reply
from tests.runner.conftest import (  # noqa: F401 — fixtures shared with the runner tests
    _server_log_on_failure, llm, pytest_runtest_makereport, recorder, session_of, text_prompt, wait_idle,
)


def git_out(cwd, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def messages_of(persona, session_id: str) -> list[dict]:
    response = persona.get(f"/session/{session_id}/message")
    assert response.status_code == 200, response.text
    return response.json()


def parts_of(messages: list[dict], kind: str) -> list[dict]:
    return [p for m in messages for p in m["parts"] if p["type"] == kind]


@pytest.fixture
def edit_turn(alice, llm):
    """One prompt whose first step writes `new.txt` and rewrites README.md (bash), then says done."""
    def run(session_id: str, *, readme: str = "bye\nworld\nagain\n", new: str = "fresh\n",
            name: str = "new.txt") -> dict:
        llm.script(
            Reply(tool_calls=[("write", {"filePath": str(alice.repo / name), "content": new}),
                              ("bash", {"command": f"printf '{readme}' > README.md", "description": "edit"})]),
            Reply(text="done"))
        response = alice.post(f"/session/{session_id}/message", json=text_prompt("change files"))
        assert response.status_code == 200, response.text
        # The answer is returned once saved; the runner lets go of the session a moment later (its git work
        # now starts sandboxes), and revert refuses a busy session.
        wait_idle(alice, session_id)
        return response.json()
    return run
