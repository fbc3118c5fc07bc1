"""Wire formats of the fake LLM: OpenAI chat.completion(.chunk) SSE and Anthropic message events."""
from __future__ import annotations

import json
import socket
import time

from tests.fakes.llm import Reply

CREATED = 1700000000


class _Break(Exception):
    pass


def send_json(handler, status: int, payload: dict, headers: dict | None = None) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)


def send_error(handler, protocol: str, reply: Reply) -> None:
    status = reply.error_status
    if protocol == "openai":
        body = {"error": {"message": reply.error_message, "type": "fake_error", "code": status}}
    else:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": reply.error_message}}
    send_json(handler, status, body, reply.error_headers)


class _Stream:
    """Chunked text/event-stream writer that counts deltas so a reply can break after N of them."""

    def __init__(self, handler, reply: Reply):
        self.handler, self.reply, self.deltas = handler, reply, 0
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()

    def write(self, text: str) -> None:
        data = text.encode()
        self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.handler.wfile.flush()

    def delta(self, text: str) -> None:
        if self.reply.break_after is not None and self.deltas >= self.reply.break_after:
            raise _Break()
        if self.reply.delay:
            time.sleep(self.reply.delay)
        self.write(text)
        self.deltas += 1

    def end(self) -> None:
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()

    def drop(self) -> None:
        """Close mid-body: the client sees an incomplete chunked read."""
        self.handler.close_connection = True
        try:
            self.handler.wfile.flush()
            self.handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _tool_id(index: int, protocol: str) -> str:
    return f"call_fake_{index}" if protocol == "openai" else f"toolu_fake_{index}"


def _pieces(arguments: str) -> list[str]:
    k = max(1, len(arguments) // 3)
    return [p for p in (arguments[:k], arguments[k:2 * k], arguments[2 * k:]) if p]


# ---------------------------------------------------------------- OpenAI chat-completions
def openai_reply(handler, body: dict, reply: Reply) -> None:
    model = body.get("model", "fake-model")
    text = reply.text if reply.text is not None else ("" if reply.tool_calls else None)
    usage = reply.usage or {"input": 0, "output": 0}
    wire_usage = {
        "prompt_tokens": usage["input"] + usage.get("cache_read", 0),
        "completion_tokens": usage["output"] + usage.get("reasoning", 0),
        "total_tokens": usage["input"] + usage.get("cache_read", 0) + usage["output"] + usage.get("reasoning", 0),
        "prompt_tokens_details": {"cached_tokens": usage.get("cache_read", 0)},
        "completion_tokens_details": {"reasoning_tokens": usage.get("reasoning", 0)},
    }
    finish = reply.finish or ("tool_calls" if reply.tool_calls else "stop")
    if not body.get("stream"):
        message: dict = {"role": "assistant", "content": text}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [{"id": _tool_id(i, "openai"), "type": "function",
                                      "function": {"name": name, "arguments": json.dumps(args)}}
                                     for i, (name, args) in enumerate(reply.tool_calls)]
        return send_json(handler, 200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": CREATED,
                                        "model": model, "usage": wire_usage,
                                        "choices": [{"index": 0, "message": message, "finish_reason": finish}]})

    def chunk(delta: dict, finish_reason=None) -> str:
        return "data: " + json.dumps({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": CREATED,
                                      "model": model, "choices": [{"index": 0, "delta": delta,
                                                                   "finish_reason": finish_reason}]}) + "\n\n"

    out = _Stream(handler, reply)
    try:
        out.write(chunk({"role": "assistant", "content": ""}))
        for piece in reply.reasoning_deltas():
            out.delta(chunk({"reasoning_content": piece}))
        for piece in reply.text_deltas(text or ""):
            out.delta(chunk({"content": piece}))
        for index, (name, args) in enumerate(reply.tool_calls):
            out.write(chunk({"tool_calls": [{"index": index, "id": _tool_id(index, "openai"), "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
            for piece in _pieces(json.dumps(args)):
                out.delta(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        out.write(chunk({}, finish))
        if reply.usage is not None:
            out.write("data: " + json.dumps({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                                             "created": CREATED, "model": model, "choices": [],
                                             "usage": wire_usage}) + "\n\n")
        out.write("data: [DONE]\n\n")
        out.end()
    except _Break:
        out.drop()


# ---------------------------------------------------------------- Anthropic messages
def anthropic_reply(handler, body: dict, reply: Reply) -> None:
    model = body.get("model", "fake-model")
    usage = reply.usage or {"input": 0, "output": 0}
    stop = reply.finish or ("tool_use" if reply.tool_calls else "end_turn")
    text = reply.text if reply.text is not None else ("" if reply.tool_calls else None)
    if not body.get("stream"):
        content: list[dict] = []
        if reply.reasoning:
            content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "fake-signature"})
        if text:
            content.append({"type": "text", "text": text})
        for index, (name, args) in enumerate(reply.tool_calls):
            content.append({"type": "tool_use", "id": _tool_id(index, "anthropic"), "name": name, "input": args})
        return send_json(handler, 200, {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                                        "content": content, "stop_reason": stop, "stop_sequence": None,
                                        "usage": {"input_tokens": usage["input"],
                                                  "output_tokens": usage["output"]}})

    def event(name: str, payload: dict) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n"

    out = _Stream(handler, reply)
    try:
        out.write(event("message_start", {"message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": usage["input"], "output_tokens": 1,
                      "cache_read_input_tokens": usage.get("cache_read", 0),
                      "cache_creation_input_tokens": usage.get("cache_write", 0)}}}))
        index = 0
        if reply.reasoning:
            out.write(event("content_block_start", {"index": index, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}}))
            for piece in reply.reasoning_deltas():
                out.delta(event("content_block_delta", {"index": index, "delta": {
                    "type": "thinking_delta", "thinking": piece}}))
            out.write(event("content_block_delta", {"index": index, "delta": {
                "type": "signature_delta", "signature": "fake-signature"}}))
            out.write(event("content_block_stop", {"index": index}))
            index += 1
        if text:
            out.write(event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}))
            for piece in reply.text_deltas(text):
                out.delta(event("content_block_delta", {"index": index, "delta": {"type": "text_delta",
                                                                                   "text": piece}}))
            out.write(event("content_block_stop", {"index": index}))
            index += 1
        for number, (name, args) in enumerate(reply.tool_calls):
            out.write(event("content_block_start", {"index": index, "content_block": {
                "type": "tool_use", "id": _tool_id(number, "anthropic"), "name": name, "input": {}}}))
            for piece in _pieces(json.dumps(args)):
                out.delta(event("content_block_delta", {"index": index, "delta": {
                    "type": "input_json_delta", "partial_json": piece}}))
            out.write(event("content_block_stop", {"index": index}))
            index += 1
        out.write(event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": usage["output"]}}))
        out.write(event("message_stop", {}))
        out.end()
    except _Break:
        out.drop()
