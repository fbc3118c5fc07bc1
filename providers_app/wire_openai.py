"""OpenAI chat-completions streaming (OpenAI and every OpenAI-compatible endpoint) through AsyncOpenAI."""
from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator

import httpx
import openai
from openai._constants import RAW_RESPONSE_HEADER

from providers_app.errors import ProviderCallError
from providers_app.pricing import cost_of
from providers_app.stream import (Finish, ReasoningDelta, StreamEvent, TextDelta, ToolCallDelta, ToolCallEnd,
                                  ToolCallStart, Usage)
from providers_app.tls import http_client
from providers_app.wire_errors import to_api_error

log = logging.getLogger(__name__)

FINISH_REASONS = {"stop": "stop", "tool_calls": "tool-calls", "function_call": "tool-calls", "length": "length",
                  "content_filter": "content-filter"}
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def _user_content(parts: list[dict]):
    blocks = []
    for part in parts:
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": part.get("text", "")})
        elif part.get("type") == "image":
            url = f"data:{part.get('mime', 'image/png')};base64,{part.get('data', '')}"
            blocks.append({"type": "image_url", "image_url": {"url": url}})
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]  # plain strings are what the most compatible servers accept
    return blocks or ""


def convert_messages(system: list[str], messages: list[dict], *, interleaved_field: str | None) -> list[dict]:
    out: list[dict] = [{"role": "system", "content": text} for text in system if text]
    for message in messages:
        parts = message.get("content") or []
        if isinstance(parts, str):
            parts = [{"type": "text", "text": parts}]
        results = [p for p in parts if p.get("type") == "tool_result"]
        others = [p for p in parts if p.get("type") != "tool_result"]
        role = message.get("role")
        if role == "assistant":
            item: dict = {"role": "assistant", "content": "".join(p.get("text", "") for p in others
                                                                  if p.get("type") == "text") or None}
            calls = [p for p in others if p.get("type") == "tool_call"]
            if calls:
                item["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                    "name": c["name"], "arguments": json.dumps(c.get("input") or {})}} for c in calls]
            reasoning = "".join(p.get("text", "") for p in others if p.get("type") == "reasoning")
            if interleaved_field and reasoning:
                item[interleaved_field] = reasoning
            if item["content"] is None and not calls:
                item["content"] = ""
            out.append(item)
        elif others:
            out.append({"role": "user", "content": _user_content(others)})
        for result in results:
            out.append({"role": "tool", "tool_call_id": result["id"], "content": result.get("output", "")})
    return out


def convert_tools(tools: list[dict]) -> list[dict]:
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                              "parameters": t.get("parameters") or {"type": "object",
                                                                                   "properties": {}}}}
            for t in tools]


def _usage(raw: dict | None) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    prompt = _int(raw.get("prompt_tokens"))
    completion = _int(raw.get("completion_tokens"))
    cached = _int(_field(raw.get("prompt_tokens_details"), "cached_tokens"))
    reasoning = _int(_field(raw.get("completion_tokens_details"), "reasoning_tokens"))
    cache_write = _int(raw.get("cache_creation_input_tokens"))
    return Usage(input=max(prompt - cached - cache_write, 0), output=max(completion - reasoning, 0),
                 reasoning=reasoning, cache_read=cached, cache_write=cache_write)


def _meter(call, raw: dict) -> None:
    """The usage received, kept on the call's meter as soon as it arrives (a stream cut after it still counts)."""
    if call.meter is not None:
        call.meter.usage = _usage(raw)
        call.meter.reported = isinstance(raw, dict)


def _int(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _field(value, name: str):
    return value.get(name) if isinstance(value, dict) else None


def _reasoning_of(delta: dict) -> str | None:
    for name in REASONING_FIELDS:
        value = delta.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _parse_arguments(raw: str) -> dict:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        log.info("tool call arguments are not JSON: %.200s", raw)
        return {}
    return value if isinstance(value, dict) else {}


def _request(call, *, system, messages, tools, temperature, max_output) -> dict:
    info = call.model
    interleaved = info.model.get("interleaved")
    field = interleaved.get("field") if isinstance(interleaved, dict) else None
    request: dict = {
        "model": info.api_model_id,
        "messages": convert_messages(system, messages, interleaved_field=field),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    limit_output = info.limit.get("output") or None
    request["max_tokens"] = max_output or limit_output or 4096
    if tools:
        request["tools"] = convert_tools(tools)
        request["tool_choice"] = "auto"
    if temperature is not None and info.model.get("temperature", True):
        request["temperature"] = temperature
    if isinstance(info.options.get("reasoningEffort"), str):
        request["reasoning_effort"] = info.options["reasoningEffort"]
    return request


def _client(call, headers: dict) -> openai.AsyncOpenAI:
    info = call.model
    timeout_ms = info.options.get("timeout")
    timeout = timeout_ms / 1000 if isinstance(timeout_ms, (int, float)) and timeout_ms > 0 else 600.0
    secret = call.credential.get("key") or call.credential.get("access") or ""
    return openai.AsyncOpenAI(api_key=secret, base_url=info.base_url, max_retries=0, timeout=timeout,
                              default_headers={**info.headers, **headers}, http_client=http_client(openai, timeout))


async def stream(call, *, system, messages, tools, temperature, max_output, headers) -> AsyncIterator[StreamEvent]:
    calls: dict[int, dict] = {}
    finish_reason, usage = None, None
    client = _client(call, headers)
    try:
        request = _request(call, system=system, messages=messages, tools=tools, temperature=temperature,
                           max_output=max_output)
        # The body is plain JSON already: posted as it is, without the SDK's typed-dict transform of every
        # message and tool (3.6 ms a call for 20 messages and 15 tools); auth, headers, status errors and
        # timeouts are still the SDK's. The raw response is streamed, unread.
        response = await client.post("/chat/completions", body=request, cast_to=httpx.Response,
                                     options={"headers": {RAW_RESPONSE_HEADER: "stream"}})
        try:
            async for chunk in _chunks(response):
                if chunk.get("usage") is not None:
                    usage = chunk["usage"]
                    _meter(call, usage)
                for choice in chunk.get("choices") or []:
                    if not isinstance(choice, dict):
                        continue
                    delta = choice.get("delta")
                    if isinstance(delta, dict):
                        reasoning = _reasoning_of(delta)
                        if reasoning:
                            yield ReasoningDelta(reasoning)
                        content = delta.get("content")
                        if isinstance(content, str) and content:
                            yield TextDelta(content)
                        for tool in delta.get("tool_calls") or []:
                            if isinstance(tool, dict):
                                for event in _tool_delta(calls, tool):
                                    yield event
                    if choice.get("finish_reason"):
                        finish_reason = choice["finish_reason"]
        finally:
            await response.aclose()
    except Exception as exc:
        error = to_api_error(exc, openai)
        if error is None:
            raise
        raise error from exc
    # The client is not closed: its HTTP client is the loop's shared one (providers_app/tls.py).
    if finish_reason is None and not calls and usage is None:
        raise ProviderCallError("The provider closed the stream before it finished", is_retryable=True)
    for state in calls.values():
        yield ToolCallEnd(state["id"], state["name"], _parse_arguments(state["arguments"]))
    reason = FINISH_REASONS.get(finish_reason or "", "other")
    if calls and reason == "stop":
        reason = "tool-calls"
    normalized = call.meter.usage if call.meter is not None and usage is not None else _usage(usage)
    yield Finish(reason, normalized, cost_of(normalized, call.model.cost))


async def _chunks(response) -> AsyncIterator[dict]:
    """The stream's chunks as plain dicts. The SDK builds a pydantic model per chunk, which cost more than
    everything else the server does with a token (bench/stream.py); requests, auth and status errors still
    go through the SDK."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
            continue
        if line or not data:
            continue  # event:, id:, retry: and comment lines; blank lines between events
        payload, data = "\n".join(data), []
        if payload.startswith("[DONE]"):
            return
        chunk = json.loads(payload)
        if not isinstance(chunk, dict):
            continue
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else None
            raise openai.APIError(message if isinstance(message, str) and message
                                  else "An error occurred during streaming",
                                  response.http_request, body=error)
        yield chunk


def _tool_delta(calls: dict[int, dict], tool: dict) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    index = tool.get("index")
    index = index if isinstance(index, int) else len(calls)
    state = calls.get(index)
    function = tool.get("function") if isinstance(tool.get("function"), dict) else {}
    name, arguments = function.get("name"), function.get("arguments")
    if state is None:
        state = {"id": tool.get("id") or f"call_{index}", "name": name or "", "arguments": ""}
        calls[index] = state
        events.append(ToolCallStart(state["id"], state["name"]))
    elif name and not state["name"]:
        state["name"] = name
    if isinstance(arguments, str) and arguments:
        state["arguments"] += arguments
        events.append(ToolCallDelta(state["id"], arguments))
    return events
