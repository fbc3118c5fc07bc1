"""The event sequence of a prompt follows the reference's (transcripts events-prompt-async / events-tool-call).

Compared on the runner's own events: session.status, message.updated of the assistant, message.part.updated
(by part type and tool state), message.part.delta (a run of them collapsed into one), session.idle. Title,
summary and diff events are asynchronous in the reference too and are left out of the comparison."""
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt

PLAIN = [
    "session.status:busy", "message.updated:assistant",
    "session.status:busy", "part:step-start", "part:text", "delta", "part:text", "part:step-finish",
    "message.updated:assistant", "message.updated:assistant",
    "session.status:idle", "session.idle",
]
ONE_TOOL = [
    "session.status:busy", "message.updated:assistant",
    "session.status:busy", "part:step-start", "part:tool:pending", "part:tool:running", "part:tool:completed",
    "part:step-finish", "message.updated:assistant", "message.updated:assistant",
    "session.status:busy", "message.updated:assistant",
    "session.status:busy", "part:step-start", "part:text", "delta", "part:text", "part:step-finish",
    "message.updated:assistant", "message.updated:assistant",
    "session.status:idle", "session.idle",
]


def skeleton(events: list[dict]) -> list[str]:
    out = []
    for event in events:
        kind, props = event["type"], event["properties"]
        if kind == "session.status":
            label = f"session.status:{props['status']['type']}"
        elif kind == "message.updated" and props["info"]["role"] == "assistant":
            label = "message.updated:assistant"
        elif kind == "message.part.updated" and props["part"]["messageID"] and props["part"]["type"] != "text" \
                or kind == "message.part.updated" and out and out[-1] != "user":
            part = props["part"]
            label = f"part:{part['type']}" + (f":{part['state']['status']}" if part["type"] == "tool" else "")
        elif kind == "message.part.delta":
            label = "delta"
        elif kind == "session.idle":
            label = "session.idle"
        else:
            continue
        if label == "delta" and out and out[-1] == "delta":
            continue
        out.append(label)
    return out


def assistant_events(events, user_message_id):
    """Drop the user message's own events (stored before the runner starts)."""
    return [e for e in events
            if not (e["type"] == "message.part.updated" and e["properties"]["part"]["messageID"] == user_message_id)]


def test_a_plain_prompt_emits_the_reference_sequence(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    llm.script(Reply(text="one two three four"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go")).json()
    events.wait_for(lambda e: e["type"] == "session.idle")
    seen = assistant_events(events.of(session["id"]), answer["info"]["parentID"])
    assert skeleton(seen) == PLAIN
    deltas = [e["properties"] for e in seen if e["type"] == "message.part.delta"]
    assert 1 <= len(deltas) <= 4  # back-to-back deltas may go out merged (runtime/deltas.py DeltaBuffer)
    assert all(d["field"] == "text" and d["messageID"] == answer["info"]["id"] for d in deltas)
    assert "".join(d["delta"] for d in deltas) == answer["parts"][1]["text"] == "one two three four"


def test_the_user_message_events_come_first(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("go"))
    events.wait_for(lambda e: e["type"] == "session.idle")
    types = events.types(session["id"])
    assert types[:4] == ["session.updated", "message.updated", "message.part.updated", "session.updated"]


def test_a_one_tool_prompt_emits_the_reference_sequence(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    llm.script(Reply(tool_calls=[("read", {"filePath": str(alice.repo / "README.md")})]),
               Reply(text="Tool read finished."))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("read it")).json()
    events.wait_for(lambda e: e["type"] == "session.idle")
    seen = assistant_events(events.of(session["id"]), answer["info"]["parentID"])
    assert skeleton(seen) == ONE_TOOL
    assert [p["type"] for p in answer["parts"]] == ["step-start", "text", "step-finish"]
    messages = alice.get(f"/session/{session['id']}/message").json()
    tool_step = messages[1]
    assert tool_step["info"]["finish"] == "tool-calls"
    tool = next(p for p in tool_step["parts"] if p["type"] == "tool")
    assert tool["tool"] == "read" and tool["state"]["status"] == "completed"
    assert "hello" in tool["state"]["output"]
    assert messages[2]["info"]["parentID"] == messages[0]["info"]["id"] == tool_step["info"]["parentID"]
