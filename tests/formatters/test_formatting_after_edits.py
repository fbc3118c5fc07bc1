"""After the agent writes or edits a file, the first enabled formatter for its extension runs on it (ruff for
Python when the project uses ruff, as opencode decides); formatter.status says which formatters would run;
`formatter: false` and `disabled` turn them off; config entries add formatters of their own."""
import os

import pytest

from tests.lsp.helpers import new_session, run_tool_call, set_config

pytestmark = pytest.mark.long_running(seconds=20)  # scheduled before shorter files (tests/conftest.py)

UNFORMATTED = "def f( a,b ):\n  return {'a':a,'b':b}\n"
FORMATTED = 'def f(a, b):\n    return {"a": a, "b": b}\n'


def use_ruff(persona) -> None:
    (persona.repo / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.ruff]\nline-length = 100\n")


def status_of(persona, name: str, path: str = "/formatter") -> dict | None:
    response = persona.get(path, params={"directory": str(persona.repo)})
    assert response.status_code == 200, response.text
    items = response.json() if path == "/formatter" else response.json()["data"]
    return next((item for item in items if item["name"] == name), None)


def test_an_unformatted_python_file_written_by_the_agent_is_formatted_on_disk(alice, llm):
    use_ruff(alice)
    path = os.path.realpath(alice.repo / "messy.py")
    part = run_tool_call(alice, llm, new_session(alice), "write", {"filePath": path, "content": UNFORMATTED})
    assert part["state"]["output"] == "Wrote file successfully."
    assert open(path).read() == FORMATTED


def test_an_edit_is_formatted_too(alice, llm):
    use_ruff(alice)
    path = os.path.realpath(alice.repo / "tidy.py")
    session_id = new_session(alice)
    run_tool_call(alice, llm, session_id, "write", {"filePath": path, "content": "x = 1\n"})
    run_tool_call(alice, llm, session_id, "edit", {"filePath": path, "oldString": "x = 1",
                                                    "newString": "x=[1,2 ,3]"})
    assert open(path).read() == "x = [1, 2, 3]\n"


def test_a_project_that_does_not_use_ruff_is_left_as_written(alice, llm):
    path = os.path.realpath(alice.repo / "messy.py")
    run_tool_call(alice, llm, new_session(alice), "write", {"filePath": path, "content": UNFORMATTED})
    assert open(path).read() == UNFORMATTED
    assert status_of(alice, "ruff")["enabled"] is False


def test_formatter_status_says_which_formatters_would_run(alice):
    assert status_of(alice, "ruff") == {"name": "ruff", "extensions": [".py", ".pyi"], "enabled": False}
    use_ruff(alice)
    assert status_of(alice, "ruff") == {"name": "ruff", "extensions": [".py", ".pyi"], "enabled": True}
    assert status_of(alice, "ruff", "/api/formatter")["enabled"] is True
    gofmt = status_of(alice, "gofmt")
    assert gofmt["extensions"] == [".go"] and isinstance(gofmt["enabled"], bool)


def test_formatter_false_turns_every_formatter_off(alice, llm):
    use_ruff(alice)
    set_config(alice, formatter=False)
    assert alice.get("/formatter", params={"directory": str(alice.repo)}).json() == []
    path = os.path.realpath(alice.repo / "messy.py")
    run_tool_call(alice, llm, new_session(alice), "write", {"filePath": path, "content": UNFORMATTED})
    assert open(path).read() == UNFORMATTED


def test_a_disabled_formatter_is_gone(alice, llm):
    use_ruff(alice)
    set_config(alice, formatter={"ruff": {"disabled": True}})
    assert status_of(alice, "ruff") is None
    path = os.path.realpath(alice.repo / "messy.py")
    run_tool_call(alice, llm, new_session(alice), "write", {"filePath": path, "content": UNFORMATTED})
    assert open(path).read() == UNFORMATTED


def test_a_configured_formatter_runs_on_its_extensions(alice, llm):
    set_config(alice, formatter={"shout": {
        "command": ["sh", "-c", 'tr a-z A-Z < "$0" > "$0.tmp" && mv "$0.tmp" "$0"', "$FILE"],
        "extensions": [".txt"], "environment": {"SHOUT": "1"}}})
    assert status_of(alice, "shout") == {"name": "shout", "extensions": [".txt"], "enabled": True}
    path = os.path.realpath(alice.repo / "quiet.txt")
    run_tool_call(alice, llm, new_session(alice), "write", {"filePath": path, "content": "hello\n"})
    assert open(path).read() == "HELLO\n"
    other = os.path.realpath(alice.repo / "quiet.md")
    run_tool_call(alice, llm, new_session(alice), "write", {"filePath": other, "content": "hello\n"})
    assert open(other).read() == "hello\n"


def test_a_failing_formatter_leaves_the_edit_in_place(alice, llm):
    set_config(alice, formatter={"broken": {"command": ["sh", "-c", "exit 3", "$FILE"], "extensions": [".txt"]}})
    path = os.path.realpath(alice.repo / "kept.txt")
    part = run_tool_call(alice, llm, new_session(alice), "write", {"filePath": path, "content": "kept\n"})
    assert part["state"]["output"] == "Wrote file successfully."
    assert open(path).read() == "kept\n"


def test_formatter_status_is_per_user_and_checks_its_input(alice, bob):
    use_ruff(alice)
    assert status_of(bob, "ruff")["enabled"] is False
    for path in ("/formatter", "/api/formatter"):
        assert bob.get(path, params={"directory": str(alice.repo)}).status_code == 403
        outside = alice.get(path, params={"directory": "/nonexistent-dir-xyz"})
        assert 400 <= outside.status_code < 500
    anonymous = alice.client.get("/formatter", params={"directory": str(alice.repo)},
                                 headers={"Authorization": ""})
    assert anonymous.status_code == 401
