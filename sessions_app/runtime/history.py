"""Stored messages → what the provider gets: the system prompt blocks and the `{role, content}` list of
providers_app.llm (reference §5.2 step 9, §5.16)."""
from __future__ import annotations

import base64
import os
import platform
import time
from urllib.parse import unquote

from sessions_app.models import Message, Part
from sessions_app.runtime.parts import tool_result_for_model

BASE_PROMPT = (
    "You are opencode, an interactive agent that helps users with software engineering tasks. Use the tools "
    "available to you to assist the user. Be concise and direct. Prefer editing existing files over creating "
    "new ones. Never guess file contents: read them first."
)
MAX_STEPS_TEXT = (
    "CRITICAL - MAXIMUM STEPS REACHED\n\nThe maximum number of steps allowed for this task has been reached. "
    "Tools are disabled until next user input. Respond with text only: summarize the work done so far and list "
    "the remaining tasks."
)
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "CONTEXT.md")


def environment_block(context) -> str:
    return "\n".join([
        "Here is some useful information about the environment you are running in:",
        "<env>",
        f"  Working directory: {context.directory}",
        f"  Workspace root folder: {context.worktree if context.vcs else context.directory}",
        f"  Is directory a git repo: {'yes' if context.vcs else 'no'}",
        f"  Platform: {platform.system().lower()}",
        f"  Today's date: {time.strftime('%a %b %d %Y')}",
        "</env>",
    ])


def instruction_blocks(context) -> list[str]:
    """The first instruction file name found between the directory and the worktree wins; every
    occurrence of it up the tree is included, outermost first."""
    chain = context.directories_up()
    for name in INSTRUCTION_FILES:
        found = [os.path.join(d, name) for d in chain if os.path.isfile(os.path.join(d, name))]
        if found:
            blocks = []
            for path in reversed(found):
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        blocks.append(f"Instructions from: {path}\n{handle.read(200_000)}")
                except OSError:
                    continue
            return blocks
    return []


def system_prompt(*, context, agent: dict, user_info: dict) -> list[str]:
    blocks = [agent.get("prompt") or BASE_PROMPT, environment_block(context), *instruction_blocks(context)]
    if isinstance(user_info.get("system"), str) and user_info["system"]:
        blocks.append(user_info["system"])
    return blocks


def _file_content(part: dict) -> dict | None:
    url, mime = part.get("url") or "", part.get("mime") or ""
    if url.startswith("data:") and "," in url:
        header, payload = url[5:].split(",", 1)
        if (mime or header.split(";")[0]).startswith("text/"):
            return None  # stored beside synthetic text parts holding its content (prompt_input); sent once
        if mime.startswith("image/") and header.endswith(";base64"):
            return {"type": "image", "mime": mime, "data": payload}
        if header.endswith(";base64"):
            try:
                text = base64.b64decode(payload).decode("utf-8", errors="replace")
            except ValueError:
                return None
        else:
            text = unquote(payload)
        return {"type": "text", "text": text}
    return None  # file:// parts were already expanded into synthetic text parts when stored


def _data(part: Part | dict) -> dict:
    return part if isinstance(part, dict) else part.data


def _user_content(parts: list) -> list[dict]:
    content = []
    for part in parts:
        data = _data(part)
        if data.get("type") == "text" and not data.get("ignored") and data.get("text"):
            content.append({"type": "text", "text": data["text"]})
        elif data.get("type") == "file":
            item = _file_content(data)
            if item:
                content.append(item)
        elif data.get("type") == "compaction":
            content.append({"type": "text", "text": "What did we do so far?"})
        elif data.get("type") == "subtask":
            content.append({"type": "text", "text": "The following tool was executed by the user"})
    return content


def _assistant_messages(info: dict, parts: list) -> list[dict]:
    content, results = [], []
    for part in parts:
        data = _data(part)
        kind = data.get("type")
        if kind == "text" and data.get("text") and not data.get("synthetic"):
            content.append({"type": "text", "text": data["text"]})
        elif kind == "reasoning" and data.get("text"):
            item = {"type": "reasoning", "text": data["text"]}
            signature = (data.get("metadata") or {}).get("signature")
            if signature:
                item["signature"] = signature
            content.append(item)
        elif kind == "tool":
            state = data.get("state") or {}
            call_id, name = data.get("callID") or data.get("id"), data.get("tool") or "invalid"
            content.append({"type": "tool_call", "id": call_id, "name": name, "input": state.get("input") or {}})
            output, is_error = tool_result_for_model(state)
            results.append({"type": "tool_result", "id": call_id, "name": name, "output": output,
                            "is_error": is_error})
    out = []
    if content:
        out.append({"role": "assistant", "content": content})
    if results:
        out.append({"role": "tool", "content": results})
    return out


def provider_messages(pairs: list[tuple[Message, list]], *, upto_user_id: str) -> list[dict]:
    """History as the model sees it while answering `upto_user_id`: later user messages (still queued)
    and their answers are left out; failed assistant messages without content are skipped."""
    out: list[dict] = []
    for message, parts in pairs:
        info = message.info
        if message.role == "user":
            if message.id > upto_user_id:
                continue
            content = _user_content(parts)
            if content:
                out.append({"role": "user", "content": content})
        else:
            if (info.get("parentID") or "") > upto_user_id:
                continue
            error = info.get("error")
            useful = [p for p in parts if _data(p).get("type") not in ("step-start", "step-finish", "reasoning")]
            if error and not (error.get("name") == "MessageAbortedError" and useful):
                continue
            out.extend(_assistant_messages(info, parts))
    return out
