import base64

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_until


def model_calls(llm):
    return [r for r in llm.requests if "title generator" not in r.system_text.lower()]


def test_a_file_url_becomes_synthetic_read_parts(alice, llm, session_of):
    session = session_of()
    (alice.repo / "notes.txt").write_text("line one\nline two\nline three\n")
    url = f"file://{alice.repo / 'notes.txt'}?start=2&end=3"
    body = {"parts": [{"type": "text", "text": "look"},
                      {"type": "file", "mime": "text/plain", "url": url, "filename": "notes.txt"}]}
    alice.post(f"/session/{session['id']}/message", json=body)
    user = alice.get(f"/session/{session['id']}/message").json()[0]
    kinds = [(p["type"], p.get("synthetic", False)) for p in user["parts"]]
    assert kinds == [("text", False), ("text", True), ("text", True), ("file", False)]
    assert user["parts"][1]["text"].startswith("Called the Read tool with the following input: {")
    assert "line two" in user["parts"][2]["text"] and "line one" not in user["parts"][2]["text"]
    assert "line two" in str(model_calls(llm)[0].body["messages"])


def test_a_file_url_range_in_other_digits_reads_the_whole_file(alice, llm, session_of):
    session = session_of()
    (alice.repo / "notes.txt").write_text("line one\nline two\n")
    url = f"file://{alice.repo / 'notes.txt'}?start=%C2%B2&end=3"  # start=² (a digit to str.isdigit)
    body = {"parts": [{"type": "file", "mime": "text/plain", "url": url, "filename": "notes.txt"}]}
    response = alice.post(f"/session/{session['id']}/message", json=body)
    assert response.status_code == 200, response.text
    read = alice.get(f"/session/{session['id']}/message").json()[0]["parts"][1]["text"]
    assert "line one" in read and "line two" in read


def test_data_urls_and_directories(alice, llm, session_of):
    session = session_of()
    (alice.repo / "src").mkdir()
    (alice.repo / "src" / "a.py").write_text("x = 1\n")
    encoded = base64.b64encode(b"inline text body").decode()
    body = {"parts": [{"type": "text", "text": "see"},
                      {"type": "file", "mime": "text/plain", "url": f"data:text/plain;base64,{encoded}",
                       "filename": "inline.txt"},
                      {"type": "file", "mime": "application/x-directory", "url": f"file://{alice.repo / 'src'}"}]}
    assert alice.post(f"/session/{session['id']}/message", json=body).status_code == 200
    parts = alice.get(f"/session/{session['id']}/message").json()[0]["parts"]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert "inline text body" in texts
    assert any("a.py" in t for t in texts)


def test_a_file_outside_the_roots_is_refused(alice, llm, session_of):
    session = session_of()
    body = {"parts": [{"type": "file", "mime": "text/plain", "url": "file:///etc/hostname"}]}
    response = alice.post(f"/session/{session['id']}/message", json=body)
    assert response.status_code in (400, 403), response.text
    assert alice.get(f"/session/{session['id']}/message").json() == []


def test_the_tools_map_removes_tools_until_a_prompt_turns_them_back_on(alice, llm, session_of):
    # 1.18: the map becomes session permission rules (tests/runner/test_prompt_tools_rules.py), so it
    # outlives the turn; `{"bash": true}` later allows it again.
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("x", tools={"bash": False}))
    offered = [t["function"]["name"] for t in model_calls(llm)[0].body.get("tools", [])]
    assert "read" in offered and "bash" not in offered
    alice.post(f"/session/{session['id']}/message", json=text_prompt("y"))
    offered = [t["function"]["name"] for t in model_calls(llm)[-1].body.get("tools", [])]
    assert "bash" not in offered
    alice.post(f"/session/{session['id']}/message", json=text_prompt("z", tools={"bash": True}))
    offered = [t["function"]["name"] for t in model_calls(llm)[-1].body.get("tools", [])]
    assert "bash" in offered


def test_an_unknown_tool_gets_the_invalid_tool_result(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("no_such_tool", {"a": 1})]), Reply(text="sorry"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("x")).json()
    assert answer["parts"][1]["text"] == "sorry"
    tool_step = alice.get(f"/session/{session['id']}/message").json()[1]
    part = next(p for p in tool_step["parts"] if p["type"] == "tool")
    assert part["tool"] == "invalid" and part["state"]["status"] == "completed"
    assert "no_such_tool" in part["state"]["output"]


def test_reasoning_is_streamed_into_a_reasoning_part(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(reasoning="thinking hard", text="answer"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("x")).json()
    kinds = [p["type"] for p in answer["parts"]]
    assert kinds == ["step-start", "reasoning", "text", "step-finish"]
    assert answer["parts"][1]["text"] == "thinking hard" and answer["parts"][1]["time"]["end"]


def test_the_first_prompt_titles_the_session_and_totals_add_up(alice, llm, session_of):
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("hello"))
    titled = wait_until(lambda: (s := alice.get(f"/session/{session['id']}").json())["title"] == "Fake session title"
                        and s)
    assert titled["tokens"]["input"] == 100 and titled["tokens"]["output"] == 20
    assert titled["agent"] == "build"
    assert titled["model"] == {"id": "fake-model", "providerID": "fake", "variant": "default"}
    alice.post(f"/session/{session['id']}/message", json=text_prompt("again"))
    assert alice.get(f"/session/{session['id']}").json()["tokens"]["input"] == 200


def test_an_explicit_model_and_agent_are_used(alice, llm, session_of):
    session = session_of()
    body = text_prompt("x", model={"providerID": "fake", "modelID": "fake-model"}, agent="plan", system="Be brief.")
    answer = alice.post(f"/session/{session['id']}/message", json=body).json()
    assert answer["info"]["agent"] == "plan" and answer["info"]["mode"] == "plan"
    assert answer["info"]["providerID"] == "fake" and answer["info"]["modelID"] == "fake-model"
    assert "Be brief." in model_calls(llm)[0].system_text
