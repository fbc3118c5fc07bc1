"""POST /session/{id}/command: the template becomes the prompt, the answer is the final assistant message,
command.executed is published; errors."""
from projects_app.models import UserConfig
from tests.fakes.fixtures import Reply
from tests.runner.conftest import wait_idle

OBSERVED = "Say hi to $1 then $2 all=[$ARGUMENTS] sh=!`echo shellsub` file @a.txt"


def add_command(persona, name, **command):
    config, _ = UserConfig.objects.get_or_create(user=persona.user)
    data = dict(config.data or {})
    data["command"] = {**(data.get("command") or {}), name: command}
    config.data = data
    config.save(update_fields=["data"])


def test_it_runs_the_observed_template_and_answers_with_the_assistant_message(alice, llm, session_of, recorder):
    (alice.repo / "a.txt").write_text("content of a\n")
    add_command(alice, "hi", template=OBSERVED)
    session = session_of()
    events = recorder()
    llm.script(Reply(text="done saying hi"))
    response = alice.post(f"/session/{session['id']}/command",
                          json={"command": "hi", "arguments": 'alice "bob smith" carol'})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["info"]["role"] == "assistant" and answer["info"]["finish"] == "stop"
    assert [p["type"] for p in answer["parts"]] == ["step-start", "text", "step-finish"]
    assert answer["parts"][1]["text"] == "done saying hi"

    user = alice.get(f"/session/{session['id']}/message").json()[0]
    assert answer["info"]["parentID"] == user["info"]["id"]
    parts = user["parts"]
    expected = 'Say hi to alice then bob smith carol all=[alice "bob smith" carol] sh=shellsub\n file @a.txt'
    assert parts[0]["type"] == "text" and parts[0]["text"] == expected
    assert parts[1]["synthetic"] and parts[1]["text"].startswith("Called the Read tool with the following input")
    assert "content of a" in parts[2]["text"]
    assert parts[3]["type"] == "file" and parts[3]["filename"] == "a.txt" and parts[3]["mime"] == "text/plain"
    model_request = [r for r in llm.requests if "title generator" not in r.system_text.lower()][0]
    assert expected in model_request.last_user_text and "content of a" in model_request.last_user_text

    executed = events.wait_for(lambda e: e["type"] == "command.executed")
    assert executed["properties"] == {"name": "hi", "sessionID": session["id"],
                                      "arguments": 'alice "bob smith" carol', "messageID": answer["info"]["id"]}


def test_the_command_agent_and_model_string_are_used(alice, llm, session_of):
    add_command(alice, "plan-it", template="Plan $1", agent="plan")
    session = session_of()
    response = alice.post(f"/session/{session['id']}/command",
                          json={"command": "plan-it", "arguments": "x", "model": "fake/fake-model"})
    assert response.status_code == 200, response.text
    info = response.json()["info"]
    assert info["agent"] == "plan" and info["providerID"] == "fake" and info["modelID"] == "fake-model"
    user = alice.get(f"/session/{session['id']}/message").json()[0]
    assert user["info"]["agent"] == "plan" and user["parts"][0]["text"] == "Plan x"


def test_a_subtask_command_runs_the_task_tool_then_continues(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text="review findings"), Reply(text="summary of the review"))
    response = alice.post(f"/session/{session['id']}/command", json={"command": "review", "arguments": ""})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["parts"][1]["text"] == "summary of the review"
    messages = alice.get(f"/session/{session['id']}/message").json()
    roles = [m["info"]["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    subtask = messages[0]["parts"][0]
    assert subtask["type"] == "subtask" and subtask["command"] == "review" and subtask["agent"] == "build"
    assert subtask["prompt"].startswith("You are a code reviewer")
    tool = messages[1]["parts"][0]
    assert tool["tool"] == "task" and tool["state"]["status"] == "completed"
    assert "review findings" in tool["state"]["output"]
    assert messages[2]["parts"][0]["text"] == "Summarize the task tool output above and continue with your task."
    assert messages[2]["parts"][0]["synthetic"] is True
    assert answer["info"]["parentID"] == messages[2]["info"]["id"]
    assert "_continues" not in messages[2]["info"]
    for child in alice.get(f"/session/{session['id']}/children").json():
        wait_idle(alice, child["id"])


def test_an_unknown_command_is_a_400_and_a_session_error(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    response = alice.post(f"/session/{session['id']}/command", json={"command": "nope", "arguments": ""})
    assert response.status_code == 400
    assert response.json()["data"]["message"] == "Command not found: nope"
    error = events.wait_for(lambda e: e["type"] == "session.error")
    assert error["properties"]["error"] == {"name": "UnknownError", "data": {"message": "Command not found: nope"}}
    assert alice.get(f"/session/{session['id']}/message").json() == []


def test_bad_bodies_are_400(alice, llm, session_of):
    session = session_of()
    url = f"/session/{session['id']}/command"
    assert alice.post(url, json={"command": "init"}).status_code == 400           # arguments missing
    assert alice.post(url, json={"arguments": ""}).status_code == 400             # command missing
    assert alice.post(url, json={"command": "init", "arguments": 3}).status_code == 400
    assert alice.post(url, json={"command": "init", "arguments": "", "model": "no-slash"}).status_code == 400
    assert alice.post(url, json={"command": "init", "arguments": "", "messageID": "bad"}).status_code == 400
    assert alice.post(url, json=["x"]).status_code == 400
    assert alice.get(f"/session/{session['id']}/message").json() == []


def test_other_users_and_anonymous_callers_are_refused(alice, bob, anon, llm, session_of):
    session = session_of()
    body = {"command": "init", "arguments": ""}
    assert bob.post(f"/session/{session['id']}/command", json=body).status_code == 404
    assert anon.post(f"/session/{session['id']}/command", json=body).status_code == 401
    assert alice.post("/session/ses_nope/command", json=body).status_code == 404
    assert alice.get(f"/session/{session['id']}/message").json() == []


def test_file_parts_of_the_body_follow_the_template(alice, llm, session_of):
    (alice.repo / "notes.txt").write_text("the notes\n")
    add_command(alice, "show", template="Show the attachment")
    session = session_of()
    part = {"type": "file", "mime": "text/plain", "url": f"file://{alice.repo / 'notes.txt'}",
            "filename": "notes.txt"}
    response = alice.post(f"/session/{session['id']}/command",
                          json={"command": "show", "arguments": "", "parts": [part]})
    assert response.status_code == 200, response.text
    user = alice.get(f"/session/{session['id']}/message").json()[0]
    assert user["parts"][0]["text"] == "Show the attachment"
    assert "the notes" in user["parts"][2]["text"] and user["parts"][3]["filename"] == "notes.txt"
    bad = alice.post(f"/session/{session['id']}/command",
                     json={"command": "show", "arguments": "", "parts": [{"type": "text", "text": "x"}]})
    assert bad.status_code == 400
