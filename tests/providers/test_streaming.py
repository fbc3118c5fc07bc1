"""stream_chat runs for real through the official SDKs against the fake provider, for both protocols."""
import pytest

from tests.fakes.fixtures import FAKE_KEY, configure_fake_provider
from tests.fakes.llm import Reply
from tests.providers.helpers import (Finish, ToolCallDelta, ToolCallEnd, ToolCallStart, collect, of_type,
                                     reasoning_of, text_of)

PROTOCOLS = ["openai", "anthropic"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_streams_text_in_deltas(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(text="Hello there, world!", chunks=4))
    events = collect(alice)
    assert text_of(events) == "Hello there, world!"
    assert len([e for e in events if e.__class__.__name__ == "TextDelta"]) == 4
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    assert finish.usage.input == 100 and finish.usage.output == 20
    assert finish.cost == pytest.approx((100 * 1.0 + 20 * 2.0) / 1_000_000)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_streams_reasoning_before_text(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(reasoning="Let me think.", text="Done."))
    events = collect(alice)
    assert reasoning_of(events) == "Let me think."
    assert text_of(events) == "Done."
    first_text = next(i for i, e in enumerate(events) if e.__class__.__name__ == "TextDelta")
    last_reasoning = max(i for i, e in enumerate(events) if e.__class__.__name__ == "ReasoningDelta")
    assert last_reasoning < first_text
    if protocol == "anthropic":
        assert any(getattr(e, "signature", None) == "fake-signature" for e in events)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_streams_tool_calls_with_arguments(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    fake_llm.script(Reply(tool_calls=[("bash", {"command": "ls -la", "description": "list"})]))
    tools = [{"name": "bash", "description": "Run a command",
              "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                             "required": ["command"]}}]
    events = collect(alice, tools=tools)
    start, = of_type(events, ToolCallStart)
    end, = of_type(events, ToolCallEnd)
    assert start.name == end.name == "bash" and start.id == end.id
    assert end.input == {"command": "ls -la", "description": "list"}
    assert "".join(d.delta for d in of_type(events, ToolCallDelta)) == '{"command": "ls -la", "description": "list"}'
    assert events[-1].reason == "tool-calls"
    sent = fake_llm.requests[-1]
    assert sent.protocol == protocol
    if protocol == "openai":
        assert sent.body["tools"][0]["function"]["name"] == "bash"
        assert sent.body["tool_choice"] == "auto"
        assert sent.body["stream_options"] == {"include_usage": True}
        assert sent.headers["authorization"] == f"Bearer {FAKE_KEY}"
    else:
        assert sent.body["tools"][0]["input_schema"]["required"] == ["command"]
        # The SDK version decides between x-api-key and a Bearer header; either carries our key.
        assert FAKE_KEY in (sent.headers.get("x-api-key", ""), sent.headers.get("authorization", "")[7:])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_sends_history_with_tool_results_and_images(alice, fake_llm, protocol):
    configure_fake_provider(alice, fake_llm, protocol=protocol)
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image", "mime": "image/png", "data": "aGVsbG8="}]},
        {"role": "assistant", "content": [{"type": "reasoning", "text": "hmm", "signature": "sig"},
                                          {"type": "text", "text": "running"},
                                          {"type": "tool_call", "id": "call_1", "name": "bash",
                                           "input": {"command": "ls"}}]},
        {"role": "tool", "content": [{"type": "tool_result", "id": "call_1", "name": "bash", "output": "a.txt",
                                      "is_error": False}]},
    ]
    events = collect(alice, messages=messages, system=["sys one", "sys two"], temperature=0.3,
                           max_output=1000)
    assert isinstance(events[-1], Finish)
    body = fake_llm.requests[-1].body
    if protocol == "openai":
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "system", "user", "assistant", "tool"]
        assert body["messages"][2]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
        assert body["messages"][3]["tool_calls"][0]["function"]["arguments"] == '{"command": "ls"}'
        assert body["messages"][4] == {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"}
        assert body["max_tokens"] == 1000 and body["temperature"] == 0.3
    else:
        assert [b["text"] for b in body["system"]] == ["sys one", "sys two"]
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        assert body["messages"][0]["content"][1]["source"]["media_type"] == "image/png"
        assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig"}
        assert body["messages"][2]["content"][0]["tool_use_id"] == "call_1"
        assert body["max_tokens"] == 1000 and body["temperature"] == 0.3
