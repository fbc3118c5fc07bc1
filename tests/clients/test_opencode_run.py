"""`opencode run --attach` (the stock CLI, 1.18.33) against our server: it creates a session, opens /event,
sends the synchronous prompt and prints the answer from the events; a permission is auto-rejected through
POST /permission/{id}/reply."""
import json
import subprocess

import pytest

from tests.clients.conftest import describe, run_opencode, server_requests
from tests.fakes.fixtures import Reply

pytestmark = pytest.mark.long_running(seconds=15)  # scheduled before shorter files (tests/conftest.py)


def test_it_prints_the_answer_and_exits_zero(server, alice, llm, opencode_bin, client_env):
    llm.script(Reply(text="Hi there from the fake, via opencode run."))
    result = run_opencode(opencode_bin, client_env, server, alice, "say hi")
    assert result.returncode == 0, describe(result, server)
    assert "Hi there from the fake, via opencode run." in result.stdout, describe(result, server)
    prompt = [r for r in llm.requests if "title generator" not in r.system_text][0]
    assert "say hi" in prompt.last_user_text


def test_the_client_calls_only_routes_we_answer(server, alice, llm, opencode_bin, client_env):
    before = len(server_requests(server))
    result = run_opencode(opencode_bin, client_env, server, alice, "say hi")
    assert result.returncode == 0, describe(result, server)
    calls = server_requests(server)[before:]
    paths = [request.split("?")[0] for request, _ in calls]
    assert "POST /session" in paths and "GET /config" in paths
    assert any(p.startswith("POST /session/ses_") and p.endswith("/message") for p in paths)
    assert [c for c in calls if c[1] >= 400] == []


def test_json_format_prints_one_line_per_part(server, alice, llm, opencode_bin, client_env):
    llm.script(Reply(text="Answer as JSON events."))
    result = run_opencode(opencode_bin, client_env, server, alice, "--format", "json", "say hi")
    assert result.returncode == 0, describe(result, server)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [e["type"] for e in events] == ["step_start", "text", "step_finish"], describe(result, server)
    text = events[1]["part"]
    assert text["type"] == "text" and text["text"] == "Answer as JSON events."
    assert text["sessionID"].startswith("ses_") and text["messageID"].startswith("msg_")
    assert events[2]["part"]["reason"] == "stop"
    assert {e["sessionID"] for e in events} == {text["sessionID"]}


def test_a_tool_call_is_shown_and_the_final_answer_printed(server, alice, llm, opencode_bin, client_env):
    (alice.repo / "notes.txt").write_text("line one\nline two\n")
    llm.script(Reply(tool_calls=[("read", {"filePath": str(alice.repo / "notes.txt")})]), Reply(text="Read it, done."))
    result = run_opencode(opencode_bin, client_env, server, alice, "--format", "json", "read notes")
    assert result.returncode == 0, describe(result, server)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    tools = [e["part"] for e in events if e["type"] == "tool_use"]
    assert len(tools) == 1 and tools[0]["tool"] == "read", describe(result, server)
    assert tools[0]["state"]["status"] == "completed" and "line two" in tools[0]["state"]["output"]
    texts = [e["part"]["text"] for e in events if e["type"] == "text"]
    assert texts == ["Read it, done."]


def test_a_permission_request_is_auto_rejected(server, alice, llm, opencode_bin, client_env):
    target = alice.repo / "run_file.txt"
    llm.script(Reply(tool_calls=[("write", {"filePath": str(target), "content": "x\n"})]),
               Reply(text="must not be reached"))
    before = len(server_requests(server))
    result = run_opencode(opencode_bin, client_env, server, alice, "--format", "json", "write a file")
    assert result.returncode == 0, describe(result, server)
    assert "permission requested: edit (run_file.txt); auto-rejecting" in result.stderr, describe(result, server)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    tool = [e["part"] for e in events if e["type"] == "tool_use"][0]
    assert tool["tool"] == "write" and tool["state"]["status"] == "error"
    assert "rejected permission" in tool["state"]["error"]
    assert not target.exists()
    assert "must not be reached" not in result.stdout
    replies = [(r, s) for r, s in server_requests(server)[before:] if r.startswith("POST /permission/per_")]
    assert len(replies) == 1 and replies[0][1] == 200, describe(result, server)
    assert alice.get("/permission").json() == []


def test_continue_reuses_the_latest_session(server, alice, llm, opencode_bin, client_env):
    first = run_opencode(opencode_bin, client_env, server, alice, "--format", "json", "first")
    assert first.returncode == 0, describe(first, server)
    session_id = json.loads(first.stdout.splitlines()[0])["sessionID"]
    llm.script(Reply(text="Continued."))
    second = run_opencode(opencode_bin, client_env, server, alice, "--continue", "--format", "json", "again")
    assert second.returncode == 0, describe(second, server)
    events = [json.loads(line) for line in second.stdout.splitlines() if line.startswith("{")]
    assert {e["sessionID"] for e in events} == {session_id}
    assert [e["part"]["text"] for e in events if e["type"] == "text"] == ["Continued."]


def test_a_wrong_token_fails_without_hanging(server, alice, llm, opencode_bin, client_env):
    alice.token = "as_wrong"
    before = len(server_requests(server))
    result = run_opencode(opencode_bin, client_env, server, alice, "say hi", timeout=60)
    assert result.returncode != 0
    assert ("POST /session", 401) in server_requests(server)[before:]


def test_the_password_alone_works_with_the_default_username(server, alice, llm, opencode_bin, client_env):
    """`OPENCODE_SERVER_PASSWORD=TOKEN opencode run --attach URL` sends Basic opencode:TOKEN."""
    llm.script(Reply(text="Password only."))
    env = {**client_env, "OPENCODE_SERVER_PASSWORD": alice.token}
    result = subprocess.run([opencode_bin, "run", "--attach", server.url, "--dir", str(alice.repo), "say hi"],
                            cwd=alice.repo, env=env, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, describe(result, server)
    assert "Password only." in result.stdout
