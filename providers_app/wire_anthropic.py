"""Anthropic messages streaming through AsyncAnthropic, thinking blocks included (their signatures are passed
on with ReasoningDelta so the runner can replay them: Anthropic rejects a modified or unsigned thinking block)."""
from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator

import anthropic

from providers_app.errors import ProviderCallError
from providers_app.pricing import cost_of
from providers_app.stream import (CallMeter, Finish, ReasoningDelta, StreamEvent, TextDelta, ToolCallDelta,
                                  ToolCallEnd, ToolCallStart)
from providers_app.tls import http_client
from providers_app.wire_errors import to_api_error

log = logging.getLogger(__name__)

STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool-calls", "max_tokens": "length",
                "model_context_window_exceeded": "length", "refusal": "content-filter"}
OAUTH_BETA = "oauth-2025-04-20"


def _block(part: dict, role: str) -> dict | None:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part["text"]} if part.get("text") else None
    if kind == "image" and role == "user":
        return {"type": "image", "source": {"type": "base64", "media_type": part.get("mime", "image/png"),
                                            "data": part.get("data", "")}}
    if kind == "reasoning" and role == "assistant":
        # Unsigned reasoning (from another provider) cannot be replayed as a thinking block.
        if part.get("signature"):
            return {"type": "thinking", "thinking": part.get("text", ""), "signature": part["signature"]}
        return None
    if kind == "tool_call" and role == "assistant":
        return {"type": "tool_use", "id": part["id"], "name": part["name"], "input": part.get("input") or {}}
    if kind == "tool_result":
        return {"type": "tool_result", "tool_use_id": part["id"], "content": part.get("output", "") or "(empty)",
                "is_error": bool(part.get("is_error"))}
    return None


def convert_messages(messages: list[dict]) -> list[dict]:
    out: list[dict] = []
    for message in messages:
        role = "assistant" if message.get("role") == "assistant" else "user"
        parts = message.get("content") or []
        if isinstance(parts, str):
            parts = [{"type": "text", "text": parts}]
        blocks = [b for b in (_block(p, role) for p in parts) if b is not None]
        if not blocks:
            continue
        # Tool results must come first in their user turn; consecutive same-role turns are merged.
        blocks.sort(key=lambda b: 0 if b["type"] == "tool_result" else 1)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _request(call, *, system, messages, tools, temperature, max_output) -> dict:
    info = call.model
    request: dict = {
        "model": info.api_model_id,
        "max_tokens": max_output or info.limit.get("output") or 4096,
        "messages": convert_messages(messages),
        "stream": True,
    }
    system_blocks = [{"type": "text", "text": text} for text in system if text]
    if system_blocks:
        request["system"] = system_blocks
    if tools:
        request["tools"] = [{"name": t["name"], "description": t.get("description", ""),
                             "input_schema": t.get("parameters") or {"type": "object", "properties": {}}}
                            for t in tools]
    thinking = info.options.get("thinking")
    if isinstance(thinking, dict):
        request["thinking"] = thinking
    elif temperature is not None and info.model.get("temperature", True):
        # The API refuses a temperature together with thinking. This SDK version no longer takes the
        # parameter as an argument, but the API still does.
        request["extra_body"] = {"temperature": temperature}
    return request


def _client(call, headers: dict) -> anthropic.AsyncAnthropic:
    info = call.model
    base_url = (info.base_url or "https://api.anthropic.com").rstrip("/")
    if base_url.endswith("/v1"):
        base_url = base_url[:-3]  # the AI SDK's baseURL carries /v1; the Python SDK appends it itself
    timeout_ms = info.options.get("timeout")
    timeout = timeout_ms / 1000 if isinstance(timeout_ms, (int, float)) and timeout_ms > 0 else 600.0
    all_headers = {**info.headers, **headers}
    if call.credential.get("type") == "oauth":
        all_headers["anthropic-beta"] = ",".join(filter(None, [all_headers.get("anthropic-beta"), OAUTH_BETA]))
        return anthropic.AsyncAnthropic(auth_token=call.credential.get("access"), base_url=base_url,
                                        max_retries=0, timeout=timeout, default_headers=all_headers,
                                        http_client=http_client(anthropic, timeout))
    return anthropic.AsyncAnthropic(api_key=call.credential.get("key"), base_url=base_url, max_retries=0,
                                    timeout=timeout, default_headers=all_headers,
                                    http_client=http_client(anthropic, timeout))


def _parse_input(raw: str) -> dict:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        log.info("tool_use input is not JSON: %.200s", raw)
        return {}
    return value if isinstance(value, dict) else {}


async def stream(call, *, system, messages, tools, temperature, max_output, headers) -> AsyncIterator[StreamEvent]:
    blocks: dict[int, dict] = {}
    meter = call.meter or CallMeter()
    usage = meter.usage
    stop_reason = None
    finished = False
    client = _client(call, headers)
    try:
        response = await client.messages.create(**_request(
            call, system=system, messages=messages, tools=tools, temperature=temperature, max_output=max_output))
        async with response:
            async for event in response:
                kind = event.type
                if kind == "message_start":
                    raw = event.message.usage
                    meter.reported = True
                    usage.input = raw.input_tokens or 0
                    usage.cache_read = getattr(raw, "cache_read_input_tokens", None) or 0
                    usage.cache_write = getattr(raw, "cache_creation_input_tokens", None) or 0
                    usage.output = raw.output_tokens or 0
                elif kind == "content_block_start":
                    block = event.content_block
                    state = {"type": block.type, "json": ""}
                    if block.type == "tool_use":
                        state.update(id=block.id, name=block.name)
                        yield ToolCallStart(block.id, block.name)
                    blocks[event.index] = state
                elif kind == "content_block_delta":
                    state = blocks.get(event.index, {})
                    delta = event.delta
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "thinking_delta" and delta.thinking:
                        yield ReasoningDelta(delta.thinking)
                    elif delta.type == "signature_delta":
                        yield ReasoningDelta("", signature=delta.signature)
                    elif delta.type == "input_json_delta" and state.get("type") == "tool_use":
                        state["json"] += delta.partial_json
                        if delta.partial_json:
                            yield ToolCallDelta(state["id"], delta.partial_json)
                elif kind == "content_block_stop":
                    state = blocks.get(event.index, {})
                    if state.get("type") == "tool_use":
                        yield ToolCallEnd(state["id"], state["name"], _parse_input(state["json"]))
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    if event.usage is not None:
                        usage.output = event.usage.output_tokens or usage.output
                        if getattr(event.usage, "input_tokens", None):
                            usage.input = event.usage.input_tokens
                        if getattr(event.usage, "cache_read_input_tokens", None):
                            usage.cache_read = event.usage.cache_read_input_tokens
                        if getattr(event.usage, "cache_creation_input_tokens", None):
                            usage.cache_write = event.usage.cache_creation_input_tokens
                elif kind == "message_stop":
                    finished = True
    except Exception as exc:
        error = to_api_error(exc, anthropic)
        if error is None:
            raise
        raise error from exc
    # The client is not closed: its HTTP client is the loop's shared one (providers_app/tls.py).
    if not finished and stop_reason is None:
        raise ProviderCallError("The provider closed the stream before it finished", is_retryable=True)
    yield Finish(STOP_REASONS.get(stop_reason or "", "other"), usage, cost_of(usage, call.model.cost))
