"""POST /session/{id}/init: runs the init command (the agent writes AGENTS.md itself), returns true, marks the
project initialized."""
from tests.fakes.fixtures import Reply


def test_init_runs_the_template_and_marks_the_project_initialized(alice, llm, session_of):
    session = session_of()
    target = alice.repo / "AGENTS.md"
    llm.script(Reply(tool_calls=[("write", {"filePath": str(target), "content": "# Agents\nRun make test.\n"})]),
               Reply(text="AGENTS.md written"))
    message_id = "msg_" + "0" * 10 + "initmessage01"
    response = alice.post(f"/session/{session['id']}/init",
                          json={"modelID": "fake-model", "providerID": "fake", "messageID": message_id})
    assert response.status_code == 200, response.text
    assert response.json() is True
    assert target.read_text() == "# Agents\nRun make test.\n"
    messages = alice.get(f"/session/{session['id']}/message").json()
    user = messages[0]
    assert user["info"]["id"] == message_id
    assert user["info"]["model"] == {"providerID": "fake", "modelID": "fake-model"}
    assert user["parts"][0]["text"].startswith("Create or update `AGENTS.md` for this repository.")
    assert messages[-1]["parts"][1]["text"] == "AGENTS.md written"
    project = alice.get("/project/current", params={"directory": str(alice.repo)}).json()
    assert isinstance(project["time"].get("initialized"), int)


def test_init_writes_nothing_itself(alice, llm, session_of):
    session = session_of()
    response = alice.post(f"/session/{session['id']}/init", json={
        "modelID": "fake-model", "providerID": "fake", "messageID": "msg_" + "0" * 10 + "initmessage02"})
    assert response.json() is True
    assert not (alice.repo / "AGENTS.md").exists()


def test_init_validation_and_isolation(alice, bob, anon, llm, session_of):
    session = session_of()
    url = f"/session/{session['id']}/init"
    good = {"modelID": "fake-model", "providerID": "fake", "messageID": "msg_" + "0" * 10 + "initmessage03"}
    assert alice.post(url, json={"modelID": "fake-model", "providerID": "fake"}).status_code == 400
    assert alice.post(url, json={**good, "messageID": "nope"}).status_code == 400
    assert alice.post(url, json={**good, "modelID": 5}).status_code == 400
    assert alice.post(url, json={**good, "modelID": "unknown-model"}).status_code == 400
    assert bob.post(url, json=good).status_code == 404
    assert anon.post(url, json=good).status_code == 401
    assert alice.post("/session/ses_nope/init", json=good).status_code == 404
    assert alice.get(f"/session/{session['id']}/message").json() == []
