"""The one place that builds and closes what the agent loop stores: assistant message infos, parts, and the
states a tool part goes through (pending → running → completed | error), plus how history reads a tool part
back for the model. Pure functions over dicts: the callers save them (sessions_app.store.messages)."""
from __future__ import annotations

from agentserver import ids
from agentserver.clock import now_ms

ABORTED = {"name": "MessageAbortedError", "data": {"message": "Aborted"}}
TOOL_ABORTED = "Tool execution aborted"
CLEARED = "[Old tool result content cleared]"
INTERRUPTED = "[Tool execution was interrupted]"


def unknown_error(message: str) -> dict:
    return {"name": "UnknownError", "data": {"message": message}}


# ---- assistant messages -------------------------------------------------------------------------------

def assistant_info(*, session_id: str, parent_id: str, agent_name: str, model: dict, cwd: str, root: str) -> dict:
    return {
        "id": ids.ascending_after("msg", parent_id), "sessionID": session_id, "role": "assistant",
        "time": {"created": now_ms()}, "parentID": parent_id,
        "modelID": model.get("modelID") or "", "providerID": model.get("providerID") or "",
        "mode": agent_name, "agent": agent_name, "path": {"cwd": cwd, "root": root},
        "cost": 0, "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
    }


def completed(info: dict, *, error: dict | None = None) -> dict:
    """`info` closed now (in place, and returned), with `error` when given."""
    if error is not None:
        info["error"] = error
    info["time"] = {**(info.get("time") or {}), "completed": now_ms()}
    return info


# ---- parts ---------------------------------------------------------------------------------------------

def new_part(session_id: str, message_id: str, kind: str, **fields) -> dict:
    return {"id": ids.ascending("prt"), "sessionID": session_id, "messageID": message_id, "type": kind, **fields}


def streaming_text(session_id: str, message_id: str, kind: str = "text") -> dict:
    """A text or reasoning part as it starts streaming."""
    return new_part(session_id, message_id, kind, text="", time={"start": now_ms()})


def ended(part: dict) -> dict:
    """A streaming text or reasoning part's final form."""
    part["time"] = {**part["time"], "end": now_ms()}
    return part


def attachment(item: dict, *, session_id: str, message_id: str) -> dict:
    return {**item, "id": item.get("id") or ids.ascending("prt"), "sessionID": session_id, "messageID": message_id,
            "type": "file"}


def stored(part: dict) -> dict:
    """The part without the loop's private bookkeeping ("_" keys)."""
    return {k: v for k, v in part.items() if not k.startswith("_")}


def close_part(data: dict, now: int | None = None) -> dict | None:
    """The finished form of a part a dead or aborted step left streaming; None if it needs nothing."""
    now = now or now_ms()
    kind = data.get("type")
    if kind in ("text", "reasoning"):
        time = dict(data.get("time") or {})
        if "end" in time:
            return None
        time.setdefault("start", now)
        time["end"] = now
        return {**data, "time": time}
    if kind == "tool":
        state = data.get("state") or {}
        if state.get("status") in ("pending", "running"):
            start = (state.get("time") or {}).get("start", now)
            return {**data, "state": {"status": "error", "input": state.get("input") or {}, "error": TOOL_ABORTED,
                                      "metadata": state.get("metadata") or {}, "time": {"start": start, "end": now}}}
    return None


# ---- tool states ---------------------------------------------------------------------------------------

def tool_pending(session_id: str, message_id: str, call_id: str, name: str) -> dict:
    return new_part(session_id, message_id, "tool", callID=call_id, tool=name,
                    state={"status": "pending", "input": {}, "raw": ""})


def tool_running(args: dict) -> dict:
    return {"status": "running", "input": args, "time": {"start": now_ms()}}


def tool_completed(state: dict, args: dict, result, *, session_id: str, message_id: str) -> dict:
    """`result` is the tool's ToolResult."""
    done = {"status": "completed", "input": args, "output": result.output, "title": result.title or "",
            "metadata": result.metadata or {}, "time": {"start": state["time"]["start"], "end": now_ms()}}
    if result.attachments:
        done["attachments"] = [attachment(a, session_id=session_id, message_id=message_id)
                               for a in result.attachments]
    return done


def tool_errored(state: dict, args: dict, message: str) -> dict:
    out = {"status": "error", "input": args, "error": message,
           "time": {"start": (state.get("time") or {}).get("start", now_ms()), "end": now_ms()}}
    if state.get("metadata"):
        out["metadata"] = state["metadata"]
    return out


def tool_pruned(data: dict, now: int) -> dict:
    """A completed tool part whose output history no longer sends (compaction's prune)."""
    state = dict(data["state"])
    state["time"] = {**(state.get("time") or {}), "compacted": now}
    return {**data, "state": state}


def tool_result_for_model(state: dict) -> tuple[str, bool]:
    """(output, is_error) of a stored tool state as the model sees it on the next call."""
    status = state.get("status")
    if status == "completed":
        return (CLEARED if (state.get("time") or {}).get("compacted") else state.get("output") or ""), False
    if status == "error":
        return state.get("error") or "error", True
    return INTERRUPTED, True
