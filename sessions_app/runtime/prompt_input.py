"""Prompt input parts → the parts stored on the user message (reference §5.2 step 3, §3.6).

A `file://` text file or directory is read through the read tool and stored as two synthetic text parts
("Called the Read tool with the following input: {…}" and the tool's output) plus the file part itself;
binary files are inlined as a `data:` URL; a `data:` text/plain URL is decoded into a synthetic text part."""
from __future__ import annotations

import asyncio
import base64
import json
import mimetypes
import os
from urllib.parse import parse_qs, unquote, urlparse

from asgiref.sync import async_to_sync

from agentserver import ids, paths
from agentserver.errors import BadRequest
from agentserver.numerals import decimal

AGENT_HINT = "Use the above message and context to generate a prompt and call the task tool with subagent: {}"
MAX_INLINE_BYTES = 10 * 1024 * 1024
TEXT_MIMES = ("text/", "application/json", "application/xml", "application/javascript", "application/x-sh")


def _is_text(mime: str, path: str) -> bool:
    if any(mime.startswith(prefix) for prefix in TEXT_MIMES):
        return True
    try:
        with open(path, "rb") as handle:
            return b"\0" not in handle.read(8192)
    except OSError:
        return False


async def _read_tool(context, message_id: str, args: dict) -> str:
    from sessions_app.runtime.tool_registry import get_tool
    from sessions_app.runtime.tools.base import ToolContext

    async def allow(*_, **__) -> None:  # the user attached it: no question asked (roots still confine)
        return None

    ctx = ToolContext(session_id="", message_id=message_id, call_id="", agent="build", context=context,
                      abort=asyncio.Event(), ask=allow)
    result = await get_tool("read").run(args, ctx)
    return result.output


def _synthetic(text: str) -> dict:
    return {"type": "text", "text": text, "synthetic": True}


def _file_url_parts(context, message_id: str, part: dict) -> list[dict]:
    from auth_app.tokens import roots_of
    from sessions_app.runtime.tools.base import ToolError

    url = urlparse(part["url"])
    path = paths.confine(unquote(url.path), roots_of(context.user), relative_to=context.directory)
    if not os.path.exists(path):
        raise BadRequest(f"File not found: {path}")
    mime = part.get("mime") or ""
    if os.path.isdir(path) or mime == "application/x-directory":
        args = {"filePath": path}
    elif _is_text(mime or (mimetypes.guess_type(path)[0] or ""), path):
        args = {"filePath": path}
        query = parse_qs(url.query)
        start, end = decimal(query.get("start", [None])[0]), decimal(query.get("end", [None])[0])
        if start is not None:
            args["offset"] = start
            if end is not None and end >= start:
                args["limit"] = end - start + 1
    else:
        if os.path.getsize(path) > MAX_INLINE_BYTES:
            raise BadRequest(f"File too large to attach: {path}")
        with open(path, "rb") as handle:
            data = base64.b64encode(handle.read()).decode()
        mime = mime or mimetypes.guess_type(path)[0] or "application/octet-stream"
        return [{**part, "mime": mime, "url": f"data:{mime};base64,{data}"}]
    try:
        output = async_to_sync(_read_tool)(context, message_id, args)
    except ToolError as error:
        raise BadRequest(str(error))
    return [_synthetic(f"Called the Read tool with the following input: {json.dumps(args)}"), _synthetic(output),
            {**part, "url": part["url"]}]


def _data_url_parts(part: dict) -> list[dict]:
    header, _, payload = part["url"][5:].partition(",")
    mime = part.get("mime") or header.split(";")[0]
    if not mime.startswith("text/"):
        return [part]
    try:
        text = base64.b64decode(payload).decode("utf-8", errors="replace") if header.endswith(";base64") \
            else unquote(payload)
    except ValueError:
        raise BadRequest("Invalid data: URL")
    args = {"filePath": part.get("filename") or "attachment"}
    return [_synthetic(f"Called the Read tool with the following input: {json.dumps(args)}"), _synthetic(text),
            part]


def resolve_parts(*, context, message_id: str, session_id: str, parts: list[dict]) -> list[dict]:
    """Stored parts (with ids, sessionID, messageID) for validated input parts."""
    out: list[dict] = []
    for part in parts:
        kind = part["type"]
        if kind == "file":
            url = part["url"]
            if url.startswith("file://"):
                out.extend(_file_url_parts(context, message_id, part))
            elif url.startswith("data:"):
                out.extend(_data_url_parts(part))
            else:
                out.append(part)
        elif kind == "agent":
            out.append(part)
            out.append(_synthetic(AGENT_HINT.format(part["name"])))
        else:
            out.append(part)
    stored = []
    for part in out:
        part_id = part.get("id") if isinstance(part.get("id"), str) and part["id"].startswith("prt") else None
        stored.append({**part, "id": part_id or ids.ascending("prt"), "sessionID": session_id,
                       "messageID": message_id})
    return stored
