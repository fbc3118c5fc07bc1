"""The ripgrep binary (from the `ripgrep` wheel, installed next to the interpreter) and a runner for it."""
from __future__ import annotations

import asyncio
import os

from agentserver import ripgrep
from agentserver.sandbox import launcher as sandbox
from sessions_app.runtime.tools.base import ToolError


def rg_path() -> str:
    found = ripgrep.binary()
    if not found:
        raise ToolError("ripgrep (rg) is not installed on the server")
    return found


async def rg(args: list[str], *, cwd: str, user, abort: asyncio.Event | None = None) -> tuple[int, str]:
    """ripgrep over `user`'s directory, in their sandbox (only the rg binary is exposed)."""
    binary = rg_path()
    try:
        process = await sandbox.start(user, [binary, *args], cwd=cwd, expose=[binary], offline=True,
                                      stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                      stderr=asyncio.subprocess.DEVNULL)
    except sandbox.SandboxUnavailable as error:
        raise ToolError(error.message) from error
    try:
        stdout, _ = await process.communicate()
    except asyncio.CancelledError:
        if process.returncode is None:
            process.kill()
        raise
    return process.returncode or 0, stdout.decode("utf-8", errors="replace")


def mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
