"""Session titles (reference §5.2 "Title generation"): the small model from config, only for root sessions
whose title is still the default, the first line of the reply without <think>, cut to 100 characters."""
from projects_app.models import UserConfig
from tests.fakes.fixtures import Reply
from tests.fakes.llm import TITLE_TEXT
from tests.runner.conftest import text_prompt, wait_idle, wait_until

SMALL = "fake-small"


def title_requests(llm):
    return [r for r in llm.requests if "title generator" in r.system_text.lower()]


def use_small_model(persona, llm):
    config = UserConfig.objects.get(user=persona.user)
    data = dict(config.data)
    provider = dict(data["provider"]["fake"])
    provider["models"] = {**provider["models"], SMALL: {**provider["models"]["fake-model"], "name": "Fake Small"}}
    data["provider"] = {**data["provider"], "fake": provider}
    data["small_model"] = f"fake/{SMALL}"
    config.data = data
    config.save(update_fields=["data"])


def test_the_title_request_goes_to_the_configured_small_model(alice, llm, session_of):
    use_small_model(alice, llm)
    session = session_of()
    alice.post(f"/session/{session['id']}/message", json=text_prompt("explain the build"))
    wait_until(lambda: alice.get(f"/session/{session['id']}").json()["title"] == TITLE_TEXT)
    [title] = title_requests(llm)
    assert title.body["model"] == SMALL
    assert "explain the build" in title.last_user_text
    assert not title.body.get("tools")
    others = [r for r in llm.requests if r is not title]
    assert others and all(r.body["model"] == "fake-model" for r in others)


def test_the_title_is_the_first_line_without_think_cut_to_100_characters(alice, llm, session_of):
    session = session_of()
    llm.consume_title_requests = True  # every request, the title one included, gets the default reply
    long_line = "Refactoring " + "x" * 150
    llm.default = Reply(text=f"<think>let me think\nabout a title</think>\n\n{long_line}\nsecond line")
    alice.post(f"/session/{session['id']}/message", json=text_prompt("first"))
    titled = wait_until(lambda: (s := alice.get(f"/session/{session['id']}").json())["title"]
                        .startswith("Refactoring") and s)
    assert titled["title"] == long_line[:97] + "..." and len(titled["title"]) == 100


def test_a_session_with_its_own_title_is_not_retitled(alice, llm, session_of):
    session = session_of(title="my own title")
    alice.post(f"/session/{session['id']}/message", json=text_prompt("hello"))
    wait_idle(alice, session["id"])
    assert title_requests(llm) == []
    assert alice.get(f"/session/{session['id']}").json()["title"] == "my own title"


def test_only_the_first_prompt_of_a_root_session_asks_for_a_title(alice, llm, session_of):
    session = session_of()
    llm.script(Reply(tool_calls=[("task", {"description": "look around", "prompt": "list files",
                                           "subagent_type": "general"})]),
               Reply(text="child says hello"), Reply(text="parent done"))
    alice.post(f"/session/{session['id']}/message", json=text_prompt("delegate"))
    wait_until(lambda: alice.get(f"/session/{session['id']}").json()["title"] == TITLE_TEXT)
    alice.post(f"/session/{session['id']}/message", json=text_prompt("again"))
    wait_idle(alice, session["id"])
    # one title request: the child session (parentID set) and the second prompt do not ask
    assert len(title_requests(llm)) == 1
    [child] = alice.get(f"/session/{session['id']}/children").json()
    assert child["title"] == "look around (@general subagent)"
