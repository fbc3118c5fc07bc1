"""Doom loop (reference §5.2 step 10, §5.5): the third identical consecutive call of a tool in one
assistant message (same tool, same input) asks the `doom_loop` permission under the agent's rules."""
import threading

from projects_app.models import UserConfig
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle, wait_until


def three_reads(path, n=3, other=None):
    calls = [("read", {"filePath": path}) for _ in range(n)]
    if other:
        calls.append(("read", {"filePath": other}))
    return Reply(tool_calls=calls)


def start_prompt(persona, session_id):
    results = {}

    def run():
        results["answer"] = persona.post(f"/session/{session_id}/message", json=text_prompt("loop")).json()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, results


def tool_parts(persona, session_id):
    return [p for m in persona.get(f"/session/{session_id}/message").json() for p in m["parts"]
            if p["type"] == "tool"]


def test_three_identical_reads_ask_doom_loop_and_once_lets_them_run(alice, llm, session_of):
    session = session_of()
    path = str(alice.repo / "README.md")
    (alice.repo / "README.md").write_text("hello doom\n")
    llm.script(three_reads(path), Reply(text="finally done"))
    thread, results = start_prompt(alice, session["id"])
    [request] = wait_until(lambda: alice.get("/permission").json())
    assert request["permission"] == "doom_loop" and request["patterns"] == ["read"]
    assert request["always"] == ["read"]
    assert request["metadata"] == {"tool": "read", "input": {"filePath": path}}
    assert request["sessionID"] == session["id"]
    third = tool_parts(alice, session["id"])[2]
    assert request["tool"]["callID"] == third["callID"]
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "once"})
    thread.join(20)
    assert results["answer"]["parts"][1]["text"] == "finally done"
    parts = tool_parts(alice, session["id"])
    assert [p["state"]["status"] for p in parts] == ["completed"] * 3
    assert all("hello doom" in p["state"]["output"] for p in parts)


def test_a_rejected_doom_loop_halts_the_loop(alice, llm, session_of):
    session = session_of()
    path = str(alice.repo / "README.md")
    (alice.repo / "README.md").write_text("x\n")
    llm.script(three_reads(path), Reply(text="must not run"))
    thread, results = start_prompt(alice, session["id"])
    [request] = wait_until(lambda: alice.get("/permission").json())
    alice.post(f"/permission/{request['id']}/reply", json={"reply": "reject"})
    thread.join(20)
    assert "error" not in results["answer"]["info"]
    assert llm.pending == 1
    statuses = [p["state"]["status"] for p in tool_parts(alice, session["id"])]
    assert statuses == ["completed", "completed", "error"]
    wait_idle(alice, session["id"])


def test_two_identical_calls_and_a_different_one_do_not_ask(alice, llm, session_of):
    session = session_of()
    (alice.repo / "a.txt").write_text("a\n")
    (alice.repo / "b.txt").write_text("b\n")
    llm.script(three_reads(str(alice.repo / "a.txt"), n=2, other=str(alice.repo / "b.txt")), Reply(text="fine"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go")).json()
    assert answer["parts"][1]["text"] == "fine"
    assert alice.get("/permission").json() == []


def test_an_agent_rule_allowing_doom_loop_does_not_ask(alice, llm, session_of):
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "permission": {"doom_loop": "allow"}}
    config.save(update_fields=["data"])
    session = session_of()
    (alice.repo / "README.md").write_text("x\n")
    llm.script(three_reads(str(alice.repo / "README.md"), n=4), Reply(text="no questions asked"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go")).json()
    assert answer["parts"][1]["text"] == "no questions asked"
    assert [p["state"]["status"] for p in tool_parts(alice, session["id"])] == ["completed"] * 4


def test_a_deny_rule_fails_the_third_call_and_the_loop_goes_on(alice, llm, session_of):
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "permission": {"doom_loop": "deny"}}
    config.save(update_fields=["data"])
    session = session_of()
    (alice.repo / "README.md").write_text("x\n")
    llm.script(three_reads(str(alice.repo / "README.md")), Reply(text="stopped looping"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go")).json()
    assert answer["parts"][1]["text"] == "stopped looping"
    third = tool_parts(alice, session["id"])[2]
    assert third["state"]["status"] == "error" and "prevents you from using" in third["state"]["error"]
