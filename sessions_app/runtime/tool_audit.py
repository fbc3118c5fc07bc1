"""What the audit log keeps of an agent's tool call: the tool, a redacted summary of its input (audit_app
caps and redacts it), its outcome, and the files it wrote (the file tools say which; a shell command's writes
are its command)."""
from __future__ import annotations

from audit_app.log import FAILURE, SUCCESS

# Tools whose input names the one file they write.
FILE_WRITERS = {"write", "edit", "multiedit"}


def files_written(part: dict) -> list[str]:
    state = part["state"]
    if state.get("status") != "completed":
        return []
    if part.get("tool") in FILE_WRITERS:
        path = (state.get("input") or {}).get("filePath")
        return [path] if isinstance(path, str) else []
    if part.get("tool") == "apply_patch":
        files = (state.get("metadata") or {}).get("files")
        return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []
    return []


def tool_call_entry(part: dict) -> dict:
    """The record's fields (audit_app.log.record's keywords) for a settled call's part."""
    state = part["state"]
    completed = state.get("status") == "completed"
    details = {"tool": part.get("tool"), "callID": part.get("callID"), "messageID": part.get("messageID"),
               "input": state.get("input") or {}, "files": files_written(part)}
    if not completed:
        details["error"] = state.get("error", "")
    return {"action": "tool.call", "object_type": "tool", "object_id": part.get("tool") or "",
            "outcome": SUCCESS if completed else FAILURE, "details": details}
