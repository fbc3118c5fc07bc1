"""An MCP server's tools join the agent's tools as `<server>_<tool>`; a model's call reaches the server and the
result reaches the next model request."""
import pytest

from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.runner.conftest import text_prompt


@pytest.fixture
def llm(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    return fake_llm


def model_calls(llm):
    return [r for r in llm.requests if "title generator" not in r.system_text.lower()]


def new_session(persona):
    response = persona.post("/session", params={"directory": str(persona.repo)}, json={})
    assert response.status_code == 200, response.text
    return response.json()["id"]


def test_the_tool_ids_and_schemas_include_mcp_tools(alice, add_server):
    add_server(alice)
    ids = alice.get("/experimental/tool/ids", params={"directory": str(alice.repo)}).json()
    assert {"calc_add", "calc_echo", "calc_env"} <= set(ids) and "bash" in ids
    tools = alice.get("/experimental/tool", params={"directory": str(alice.repo), "provider": "fake",
                                                    "model": "fake-model"}).json()
    add = next(t for t in tools if t["id"] == "calc_add")
    assert add["description"] == "Add two integers."
    assert add["parameters"]["type"] == "object" and set(add["parameters"]["properties"]) == {"a", "b"}
    assert add["parameters"]["required"] == ["a", "b"]


def test_a_model_calls_an_mcp_tool_and_sees_its_result(alice, llm, add_server):
    add_server(alice)
    session_id = new_session(alice)
    llm.script(Reply(tool_calls=[("calc_add", {"a": 2, "b": 40})]), Reply(text="the sum is 42"))
    answer = alice.post(f"/session/{session_id}/message", json=text_prompt("add 2 and 40"), timeout=60).json()
    assert answer["parts"][1]["text"] == "the sum is 42"
    calls = model_calls(llm)
    offered = [t["function"]["name"] for t in calls[0].body.get("tools", [])]
    assert "calc_add" in offered
    tool_step = alice.get(f"/session/{session_id}/message").json()[1]
    part = next(p for p in tool_step["parts"] if p["type"] == "tool")
    assert part["tool"] == "calc_add" and part["state"]["status"] == "completed"
    assert part["state"]["output"] == "42" and part["state"]["input"] == {"a": 2, "b": 40}
    tool_messages = [m for m in calls[1].body["messages"] if m.get("role") == "tool"]
    assert tool_messages and "42" in str(tool_messages[-1]["content"])


def test_an_mcp_tool_denied_by_config_is_not_offered(alice, llm, add_server):
    from projects_app.models import UserConfig

    add_server(alice)
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "permission": {"calc_echo": "deny"}}
    config.save()
    session_id = new_session(alice)
    llm.script(Reply(text="ok"))
    alice.post(f"/session/{session_id}/message", json=text_prompt("hi"), timeout=60)
    offered = [t["function"]["name"] for t in model_calls(llm)[0].body.get("tools", [])]
    assert "calc_add" in offered and "calc_echo" not in offered


def test_the_mcp_child_gets_no_server_secrets_and_runs_in_the_directory(alice, llm, add_server):
    add_server(alice, config={"type": "local", "command": __import__("sys").executable,
                              "arguments": [__import__("tests.mcp.conftest", fromlist=["x"]).FAKE_SERVER],
                              "environment": {"MY_SETTING": "visible"}})
    session_id = new_session(alice)
    llm.script(Reply(tool_calls=[("calc_env", {})]), Reply(text="done"))
    alice.post(f"/session/{session_id}/message", json=text_prompt("env"), timeout=60)
    part = next(p for p in alice.get(f"/session/{session_id}/message").json()[1]["parts"] if p["type"] == "tool")
    output = part["state"]["output"]
    names = {line.split("=", 1)[0] for line in output.splitlines()[1:]}
    assert output.splitlines()[0] == f"cwd={alice.repo}"
    assert "MY_SETTING" in names and "PATH" in names
    for secret in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "AGENTSERVER_DATA_DIR", "SECRET_KEY",
                   "AGENTSERVER_FERNET_KEYS", "REDIS_URL"):
        assert secret not in names
    assert len(names) <= 12


def test_an_mcp_tool_asks_under_its_tool_id_when_the_config_says_ask(alice, llm, add_server):
    import threading

    from projects_app.models import UserConfig
    from tests.runner.conftest import wait_until

    add_server(alice)
    config = UserConfig.objects.get(user=alice.user)
    config.data = {**config.data, "permission": {"calc_echo": "ask"}}
    config.save()
    session_id = new_session(alice)
    llm.script(Reply(tool_calls=[("calc_echo", {"text": "hi"})]), Reply(text="echoed"))
    results = {}
    thread = threading.Thread(target=lambda: results.update(answer=alice.post(
        f"/session/{session_id}/message", json=text_prompt("echo"), timeout=60).json()))
    thread.start()
    request = wait_until(lambda: alice.get("/permission").json())[0]
    assert request["permission"] == "calc_echo" and request["patterns"] == ["*"]
    assert alice.post(f"/permission/{request['id']}/reply", json={"reply": "once"}).json() is True
    thread.join(30)
    assert results["answer"]["parts"][1]["text"] == "echoed"
    part = next(p for p in alice.get(f"/session/{session_id}/message").json()[1]["parts"] if p["type"] == "tool")
    assert part["state"]["status"] == "completed" and part["state"]["output"] == "Echo: hi"


def test_a_broken_mcp_server_does_not_stop_a_turn(alice, llm, add_server):
    add_server(alice, "broken", {"type": "local", "command": "/nonexistent/mcp-server"})
    session_id = new_session(alice)
    llm.script(Reply(text="still here"))
    answer = alice.post(f"/session/{session_id}/message", json=text_prompt("hi"), timeout=60).json()
    assert answer["parts"][1]["text"] == "still here"
    offered = [t["function"]["name"] for t in model_calls(llm)[0].body.get("tools", [])]
    assert "bash" in offered and not [name for name in offered if name.startswith("broken_")]
