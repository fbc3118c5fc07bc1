"""session.summarize / v2 session.compact / automatic compaction: the compaction pair, session.compacted, and
history that starts at the compaction afterwards."""
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt, wait_idle


def model_requests(llm):
    return [r for r in llm.requests if "title generator" not in r.system_text.lower()]


def all_text(request) -> str:
    out = []
    for message in request.body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(c.get("text", "") for c in content if isinstance(c, dict))
    return "\n".join(out)


def test_summarize_creates_the_compaction_pair_and_later_prompts_see_only_what_follows(
        alice, llm, session_of, recorder):
    session = session_of()
    sid = session["id"]
    llm.script(Reply(text="first answer"), Reply(text="second answer"), Reply(text="SUMMARY OF ALL"),
               Reply(text="after answer"))
    alice.post(f"/session/{sid}/message", json=text_prompt("first question"))
    alice.post(f"/session/{sid}/message", json=text_prompt("second question", agent="plan"))
    events = recorder()
    response = alice.post(f"/session/{sid}/summarize", json={"providerID": "fake", "modelID": "fake-model"})
    assert response.status_code == 200, response.text
    assert response.json() is True

    messages = alice.get(f"/session/{sid}/message").json()
    request, summary = messages[-2], messages[-1]
    assert request["info"]["role"] == "user" and request["info"]["agent"] == "plan"
    assert [{k: p[k] for k in ("type", "auto")} for p in request["parts"]] == [{"type": "compaction", "auto": False}]
    info = summary["info"]
    assert info["mode"] == info["agent"] == "compaction" and info["summary"] is True
    assert info["parentID"] == request["info"]["id"] and info["finish"] == "stop"
    assert [p["text"] for p in summary["parts"] if p["type"] == "text"] == ["SUMMARY OF ALL"]

    compaction_call = model_requests(llm)[2]
    assert "first question" in all_text(compaction_call) and "second answer" in all_text(compaction_call)
    assert "summary" in compaction_call.last_user_text.lower()
    assert not compaction_call.body.get("tools")

    events.wait_for(lambda e: e["type"] == "session.compacted" and e["properties"] == {"sessionID": sid})
    compacting = [e for e in events.of(sid) if e["type"] == "session.updated"
                  and e["properties"]["info"]["time"].get("compacting")]
    assert compacting, "session.time.compacting was never set"
    assert "compacting" not in alice.get(f"/session/{sid}").json()["time"]

    answer = alice.post(f"/session/{sid}/message", json=text_prompt("after compaction")).json()
    assert answer["parts"][1]["text"] == "after answer"
    later = all_text(model_requests(llm)[3])
    assert "SUMMARY OF ALL" in later and "after compaction" in later
    assert "first question" not in later and "second answer" not in later
    context = alice.get(f"/api/session/{sid}/context").json()["data"]
    assert context[0]["info"]["id"] == request["info"]["id"]


def test_v2_compact_compacts_with_the_sessions_model(alice, llm, session_of):
    session = session_of()
    sid = session["id"]
    llm.script(Reply(text="an answer"), Reply(text="THE SUMMARY"))
    alice.post(f"/session/{sid}/message", json=text_prompt("hello"))
    response = alice.post(f"/api/session/{sid}/compact")
    assert response.status_code == 204, response.text
    messages = alice.get(f"/session/{sid}/message").json()
    assert messages[-2]["parts"][0]["type"] == "compaction"
    assert messages[-1]["info"]["summary"] is True
    assert messages[-1]["info"]["providerID"] == "fake" and messages[-1]["info"]["modelID"] == "fake-model"
    assert messages[-1]["parts"][1]["text"] == "THE SUMMARY"


def test_a_step_that_fills_the_context_is_compacted_automatically_and_continued(alice, llm, session_of):
    session = session_of()
    sid = session["id"]
    full = {"input": 125_000, "output": 100, "reasoning": 0, "cache_read": 0, "cache_write": 0}
    llm.script(Reply(text="big answer", usage=full), Reply(text="AUTO SUMMARY"), Reply(text="carried on"))
    answer = alice.post(f"/session/{sid}/message", json=text_prompt("do a lot")).json()
    assert answer["parts"][1]["text"] == "carried on"
    messages = alice.get(f"/session/{sid}/message").json()
    kinds = [(m["info"]["role"], m["info"].get("mode")) for m in messages]
    assert kinds == [("user", None), ("assistant", "build"), ("user", None), ("assistant", "compaction"),
                     ("user", None), ("assistant", "build")]
    assert messages[2]["parts"][0]["type"] == "compaction" and messages[2]["parts"][0]["auto"] is True
    resume = messages[4]["parts"][0]
    assert resume["synthetic"] is True and resume["text"].startswith("Continue if you have next steps")
    assert answer["info"]["id"] == messages[5]["info"]["id"]
    last = all_text(model_requests(llm)[2])
    assert "AUTO SUMMARY" in last and "do a lot" not in last


def test_summarize_validation_and_isolation(alice, bob, anon, llm, session_of):
    session = session_of()
    sid = session["id"]
    good = {"providerID": "fake", "modelID": "fake-model"}
    assert alice.post(f"/session/{sid}/summarize", json={"providerID": "fake"}).status_code == 400
    assert alice.post(f"/session/{sid}/summarize", json={**good, "auto": "yes"}).status_code == 400
    assert alice.post(f"/session/{sid}/summarize", json={**good, "modelID": "nope"}).status_code == 400
    assert bob.post(f"/session/{sid}/summarize", json=good).status_code == 404
    assert anon.post(f"/session/{sid}/summarize", json=good).status_code == 401
    assert alice.post("/session/ses_nope/summarize", json=good).status_code == 404
    assert bob.post(f"/api/session/{sid}/compact").status_code == 404
    assert anon.post(f"/api/session/{sid}/compact").status_code == 401
    assert alice.post("/api/session/bad/compact").status_code == 400
    assert alice.get(f"/session/{sid}/message").json() == []
    wait_idle(alice, sid)
