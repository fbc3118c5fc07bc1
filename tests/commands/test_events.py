"""Event order of a command and a summarize, as the reference timelines (events-command, events-summarize)."""
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt


def index_of(types, name, start=0):
    return types.index(name, start)


def test_command_executed_follows_the_completed_answer(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    response = alice.post(f"/session/{session['id']}/command", json={"command": "init", "arguments": ""})
    assert response.status_code == 200
    answer_id = response.json()["info"]["id"]
    events.wait_for(lambda e: e["type"] == "command.executed")
    seen = events.of(session["id"])
    completed = max(i for i, e in enumerate(seen) if e["type"] == "message.updated"
                    and e["properties"]["info"]["id"] == answer_id
                    and e["properties"]["info"]["time"].get("completed"))
    executed = [i for i, e in enumerate(seen) if e["type"] == "command.executed"]
    assert len(executed) == 1 and completed < executed[0]


def test_summarize_events(alice, llm, session_of, recorder):
    session = session_of()
    sid = session["id"]
    llm.script(Reply(text="hello"), Reply(text="the summary", reasoning="Let me think."))
    alice.post(f"/session/{sid}/message", json=text_prompt("hi"))
    events = recorder()
    assert alice.post(f"/session/{sid}/summarize", json={"providerID": "fake", "modelID": "fake-model"}).json()
    events.wait_for(lambda e: e["type"] == "session.idle")
    seen = events.of(sid)
    types = [e["type"] for e in seen]
    compaction_part = next(i for i, e in enumerate(seen) if e["type"] == "message.part.updated"
                           and e["properties"]["part"]["type"] == "compaction")
    summary_updates = [i for i, e in enumerate(seen) if e["type"] == "message.updated"
                       and e["properties"]["info"].get("summary") is True]
    assert compaction_part < summary_updates[0]
    assert summary_updates[-1] < index_of(types, "session.compacted") < index_of(types, "session.idle")
    final = seen[summary_updates[-1]]["properties"]["info"]
    assert final["time"]["completed"] and final["finish"] == "stop"
