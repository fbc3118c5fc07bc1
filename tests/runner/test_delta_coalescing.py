"""Token deltas that arrive back-to-back go out merged (runtime/deltas.py DeltaBuffer); slow ones go out one by one.
Either way they concatenate to the stored text exactly and come before the part's final message.part.updated."""
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt


def _text_events(events: list[dict], part_id: str) -> list[dict]:
    return [e for e in events
            if e["type"] == "message.part.delta" and e["properties"]["partID"] == part_id
            or e["type"] == "message.part.updated" and e["properties"]["part"]["id"] == part_id]


def test_a_burst_of_deltas_is_merged_and_concatenates_to_the_final_text(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    text = "".join(f"w{i} " for i in range(2000))
    llm.script(Reply(text=text, chunks=2000))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go")).json()
    events.wait_for(lambda e: e["type"] == "session.idle")
    part = next(p for p in answer["parts"] if p["type"] == "text")
    seen = _text_events(events.of(session["id"]), part["id"])
    deltas = [e["properties"]["delta"] for e in seen if e["type"] == "message.part.delta"]
    assert "".join(deltas) == part["text"] == text
    assert 1 <= len(deltas) < 2000
    # the part's first write (empty text) comes before every delta, its final write after all of them
    assert seen[0]["type"] == "message.part.updated" and seen[0]["properties"]["part"]["text"] == ""
    assert seen[-1]["type"] == "message.part.updated" and seen[-1]["properties"]["part"]["text"] == text
    assert all(e["type"] == "message.part.delta" for e in seen[1:-1])


def test_deltas_of_a_slow_stream_go_out_one_by_one(alice, llm, session_of, recorder):
    from projects_app.models import UserConfig

    # The step-start snapshot (git in the user's sandbox) runs before the first delta is handled; on a loaded
    # machine it outlasts the 0.1 s between tokens and the waiting ones would merge. This is about deltas.
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "snapshot": False}
    config.save(update_fields=["data"])
    session = session_of()
    events = recorder()
    llm.script(Reply(text="slow tokens arrive apart", delay=0.1))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go")).json()
    events.wait_for(lambda e: e["type"] == "session.idle")
    part = next(p for p in answer["parts"] if p["type"] == "text")
    deltas = [e["properties"]["delta"] for e in _text_events(events.of(session["id"]), part["id"])
              if e["type"] == "message.part.delta"]
    assert deltas == ["slow", " tokens", " arrive", " apart"]


def test_reasoning_and_text_deltas_stay_in_their_own_parts(alice, llm, session_of, recorder):
    session = session_of()
    events = recorder()
    reasoning = " ".join(f"r{i}" for i in range(300))
    text = " ".join(f"t{i}" for i in range(300))
    llm.script(Reply(reasoning=reasoning, text=text))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("go")).json()
    events.wait_for(lambda e: e["type"] == "session.idle")
    by_type = {p["type"]: p for p in answer["parts"]}
    seen = events.of(session["id"])
    for kind, expected in (("reasoning", reasoning), ("text", text)):
        deltas = [e["properties"]["delta"] for e in _text_events(seen, by_type[kind]["id"])
                  if e["type"] == "message.part.delta"]
        assert "".join(deltas) == by_type[kind]["text"] == expected
