"""Has this session read the file it now wants to overwrite, and is that read still current?

Kept in the session's completed tool parts (not in a worker's memory): a runner may continue on another
worker, and the parts are already durable."""
from __future__ import annotations

import os

from agentserver.workers.loop import free_db
from sessions_app.runtime.tools.base import ToolContext, ToolError

# Tools whose completion means the session knows the file's current content.
_KNOWING_TOOLS = ("read", "write", "edit", "apply_patch")


def _paths_of(data: dict, directory: str) -> list[str]:
    state = data.get("state") or {}
    metadata = state.get("metadata") or {}
    found = []
    if isinstance(metadata.get("filepath"), str):
        found.append(metadata["filepath"])
    if isinstance(metadata.get("files"), list):
        found += [f for f in metadata["files"] if isinstance(f, str)]
    file_path = (state.get("input") or {}).get("filePath")
    if isinstance(file_path, str) and file_path:
        found.append(os.path.realpath(os.path.join(directory, file_path)))
    return found


def last_known(session_id: str, path: str, directory: str) -> int | None:
    """ms time of the latest completed read/write/edit of `path` in the session, or None."""
    from sessions_app.store.messages import completed_tool_data

    for data in completed_tool_data(session_id, tools=_KNOWING_TOOLS, limit=500):
        if path in _paths_of(data, directory):
            end = ((data.get("state") or {}).get("time") or {}).get("end")
            return int(end) if isinstance(end, (int, float)) else 0
    return None


async def assert_read(ctx: ToolContext, path: str) -> None:
    if ctx.extra.get("skip_read_check"):
        return
    known = await free_db(last_known)(ctx.session_id, path, ctx.context.directory)
    if known is None:
        raise ToolError(f"You must read file {path} before overwriting it. Use the Read tool first")
    try:
        modified = int(os.stat(path).st_mtime * 1000)
    except OSError:
        return
    if known and modified > known:
        raise ToolError(f"File {path} has been modified since it was last read.\nLast modification: {modified}\n"
                        f"Last read: {known}\n\nPlease read the file again before modifying it.")
