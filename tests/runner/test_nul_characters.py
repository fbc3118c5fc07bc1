"""A NUL character anywhere in a JSON value is kept and given back, on PostgreSQL too (its jsonb cannot hold
U+0000: agentserver/db/json_column.py stores it escaped). So is the private-use character the escape uses."""
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt

AWKWARD = "a\x00b \ue000 \ue0000 \\u0000 \\ue000 end"


def test_metadata_with_nul_in_keys_and_values_comes_back_as_sent(alice):
    metadata = {AWKWARD: [AWKWARD, {"inner\x00": "\x00"}], "plain": 1}
    created = alice.post("/session", json={"metadata": metadata})
    assert created.status_code == 200, created.text
    session_id = created.json()["id"]
    assert created.json()["metadata"] == metadata
    assert alice.get(f"/session/{session_id}").json()["metadata"] == metadata
    listed = {s["id"]: s for s in alice.get("/session").json()}
    assert listed[session_id]["metadata"] == metadata
    changed = {"k\x00": "\ue000\ue000"}
    assert alice.patch(f"/session/{session_id}", json={"metadata": changed}).status_code == 200
    assert alice.get(f"/session/{session_id}").json()["metadata"] == changed
    v2 = alice.post("/api/session", json={"metadata": metadata})
    assert v2.status_code == 200, v2.text
    # v2's shape carries no metadata (opencode's SessionV2Info); 1.18's read of the same session does.
    assert alice.get(f"/session/{v2.json()['data']['id']}").json()["metadata"] == metadata


def test_a_config_value_with_nul_is_kept_in_the_stored_layer(alice):
    """The config layers are read back as raw column text (projects_app/config.py): the escape is undone there."""
    instructions = ["rules\x00one.md", "\ue000two.md"]
    patched = alice.patch("/config", json={"instructions": instructions})
    assert patched.status_code == 200, patched.text
    assert alice.get("/config").json()["instructions"] == instructions


def test_a_command_output_with_nul_is_stored_and_listed_as_it_was(alice, llm, session_of):
    session = session_of()
    response = alice.post(f"/session/{session['id']}/shell",
                          json={"agent": "build", "command": r"printf 'x\000y\356\200\200z'"})
    assert response.status_code == 200, response.text
    assert response.json()["parts"][0]["state"]["output"] == "x\x00y\ue000z"
    messages = alice.get(f"/session/{session['id']}/message").json()
    assert messages[-1]["parts"][0]["state"]["output"] == "x\x00y\ue000z"


def test_a_model_answer_with_nul_completes_and_reads_back(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(text=AWKWARD))
    response = alice.post(f"/session/{session['id']}/message", json=text_prompt("say it"))
    assert response.status_code == 200, response.text
    assert response.json()["parts"][1]["text"] == AWKWARD
    messages = alice.get(f"/session/{session['id']}/message?limit=10").json()
    assert messages[-1]["parts"][1]["text"] == AWKWARD
    assert messages[-1]["info"]["finish"] == "stop"
