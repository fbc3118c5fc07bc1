"""Prune (reference §5.10): after a loop, old tool outputs beyond the newest 40,000 tokens are marked
compacted (if that frees more than 20,000) and the model then sees a placeholder instead."""
from agentserver import ids
from projects_app.models import now_ms
from tests.runner.conftest import text_prompt, wait_idle
from tests.sessions.helpers import add_message


def add_tool_part(session_id: str, message_id: str, tool: str, output: str) -> str:
    from sessions_app.models import Session
    from sessions_app.store.messages import part_save

    part_id = ids.ascending("prt")
    part_save(session=Session.objects.get(id=session_id), part={
        "id": part_id, "sessionID": session_id, "messageID": message_id, "type": "tool", "tool": tool,
        "callID": "call_" + part_id, "state": {"status": "completed", "input": {}, "output": output, "title": "",
                                               "metadata": {}, "time": {"start": now_ms(), "end": now_ms()}}})
    return part_id


def tool_states(persona, session_id: str) -> dict:
    return {p["id"]: p["state"] for m in persona.get(f"/session/{session_id}/message").json()
            for p in m["parts"] if p["type"] == "tool"}


def test_old_tool_outputs_are_pruned_after_the_loop(alice, llm, session_of):
    sid = session_of()["id"]
    old_user = add_message(sid, texts=("old question",))
    old = add_message(sid, role="assistant", texts=(), parent_id=old_user["info"]["id"], finish="tool-calls")
    oldest = add_tool_part(sid, old["info"]["id"], "bash", "A" * 100_000)    # 25,000 tokens each
    skill = add_tool_part(sid, old["info"]["id"], "skill", "S" * 100_000)
    middle = add_tool_part(sid, old["info"]["id"], "read", "B" * 100_000)
    newest = add_tool_part(sid, old["info"]["id"], "grep", "C" * 100_000)
    recent_user = add_message(sid, texts=("recent question",))
    add_message(sid, role="assistant", texts=("recent answer",), parent_id=recent_user["info"]["id"])

    alice.post(f"/session/{sid}/message", json=text_prompt("now"))
    wait_idle(alice, sid)
    states = tool_states(alice, sid)
    assert states[oldest]["time"].get("compacted") and states[middle]["time"].get("compacted")
    assert "compacted" not in states[newest]["time"] and "compacted" not in states[skill]["time"]

    alice.post(f"/session/{sid}/message", json=text_prompt("again"))
    sent = str(llm.requests[-1].body)
    assert "[Old tool result content cleared]" in sent and "CCCC" in sent and "AAAA" not in sent


def test_prune_can_be_switched_off(alice, llm, session_of):
    from projects_app.models import UserConfig

    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "compaction": {"prune": False}}
    config.save(update_fields=["data"])
    sid = session_of()["id"]
    user = add_message(sid, texts=("old question",))
    old = add_message(sid, role="assistant", texts=(), parent_id=user["info"]["id"], finish="tool-calls")
    parts = [add_tool_part(sid, old["info"]["id"], "bash", "A" * 100_000) for _ in range(4)]
    add_message(sid, texts=("recent question",))
    alice.post(f"/session/{sid}/message", json=text_prompt("now"))
    wait_idle(alice, sid)
    states = tool_states(alice, sid)
    assert not any(states[p]["time"].get("compacted") for p in parts)
