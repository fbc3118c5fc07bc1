"""websearch through the real stack: absent from tool.ids until the user configures a backend, then offered
to the model and run against the (local) backend when the model calls it."""
from tests.fakes.fixtures import Reply
from tests.fakes.search_backend import search_backend  # noqa: F401  (fixture)
from tests.runner.conftest import text_prompt


def test_websearch_appears_with_a_backend_and_runs_in_a_turn(alice, llm, session_of, search_backend):  # noqa: F811
    params = {"directory": str(alice.repo)}
    assert "websearch" not in alice.get("/experimental/tool/ids", params=params).json()
    listed = alice.get("/experimental/tool", params={**params, "provider": "fake", "model": "fake-model"}).json()
    assert "websearch" not in [t["id"] for t in listed]
    patched = alice.patch("/config", params=params, json={
        "websearch": {"provider": "searxng", "url": search_backend.url}, "webfetch": {"allow_private": True}})
    assert patched.status_code == 200, patched.text
    assert "websearch" in alice.get("/experimental/tool/ids", params=params).json()

    session = session_of()
    llm.script(Reply(tool_calls=[("websearch", {"query": "django lts", "numResults": 1})]), Reply(text="found it"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("search the web"))
    assert answer.status_code == 200, answer.text
    part = next(p for m in alice.get(f"/session/{session['id']}/message").json() for p in m["parts"]
                if p["type"] == "tool")
    assert part["tool"] == "websearch" and part["state"]["status"] == "completed", part
    assert "Django 5.2 is a long-term support release." in part["state"]["output"]
    assert search_backend.seen[0]["query"]["q"] == ["django lts"]
    model_call = next(r for r in llm.requests if "title generator" not in r.system_text.lower())
    assert "websearch" in [t["function"]["name"] for t in model_call.body.get("tools", [])]


def test_websearch_false_keeps_it_away(alice, llm):
    params = {"directory": str(alice.repo)}
    alice.patch("/config", params=params, json={"websearch": False})
    assert "websearch" not in alice.get("/experimental/tool/ids", params=params).json()
