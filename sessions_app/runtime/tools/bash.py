"""bash: a command in its own process group, output streamed into the running part, a timeout, and an
environment built from an allowlist so no server secret reaches the child."""
from __future__ import annotations

import asyncio
import os
import signal
import time

from agentserver.sandbox import launcher as sandbox
from agentserver.sandbox.childenv import safe_environment
from agentserver.workers.loop import free_db
from sessions_app.runtime.tools import shellparse
from sessions_app.runtime.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    confine,
    optional_int,
    require_str,
    schema,
    truncate,
)

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_METADATA = 30_000
UPDATE_EVERY = 0.25

DESCRIPTION = f"""Executes a given bash command with an optional timeout, ensuring proper handling and security measures.

Be aware: OS: linux, Shell: bash

All commands run in the current working directory by default. Use the `workdir` parameter if you need to run a command in a different directory. AVOID using `cd <directory> && <command>` patterns - use `workdir` instead.

IMPORTANT: This tool is for terminal operations like git, npm, docker, etc. DO NOT use it for file operations (reading, writing, editing, searching, finding files) - use the specialized tools for this instead.

Usage notes:
  - The command argument is required.
  - You can specify an optional timeout in milliseconds (up to {MAX_TIMEOUT_MS}ms / {MAX_TIMEOUT_MS // 60000} minutes). If not specified, commands will time out after {DEFAULT_TIMEOUT_MS}ms ({DEFAULT_TIMEOUT_MS // 60000} minutes).
  - If the output exceeds {MAX_METADATA} characters, output will be truncated before being returned to you.
  - Avoid using Bash with the `find`, `grep`, `cat`, `head`, `tail`, `sed`, `awk`, or `echo` commands unless explicitly instructed; use the Glob, Grep, Read, Edit and Write tools instead.
  - When issuing multiple commands, use the ';' or '&&' operator to separate them. DO NOT use newlines to separate commands (newlines are ok in quoted strings).
  - Always quote file paths that contain spaces with double quotes."""


def shell_path() -> str:
    return "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"


def child_environment(home: str) -> dict[str, str]:
    """A command the model chose sees only agentserver.sandbox.childenv's allowlist, and no pager or prompt."""
    return safe_environment(home=home, SHELL=shell_path(), TERM="dumb", PAGER="cat", GIT_PAGER="cat",
                            GIT_TERMINAL_PROMPT="0")


def kill_group(pid: int) -> None:
    """SIGTERM first so the command may clean up, then SIGKILL for what is left."""
    sandbox.kill_group(pid, signal.SIGTERM)
    time.sleep(0.05)
    sandbox.kill_group(pid, signal.SIGKILL)


class BashTool(Tool):
    id = "bash"
    description = DESCRIPTION
    parameters = schema({
        "command": {"type": "string", "description": "The command to execute"},
        "timeout": {"type": "integer", "exclusiveMinimum": 0, "description": "Optional timeout in milliseconds"},
        "workdir": {"type": "string", "description": (
            "The working directory to run the command in. Defaults to the current directory. Use this instead of "
            "'cd' commands.")},
        "description": {"type": "string", "description": (
            "Clear, concise description of what this command does in 5-10 words.")},
    }, ["command"])

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        command = require_str(args, "command")
        timeout_ms = optional_int(args, "timeout")
        if timeout_ms is not None and timeout_ms <= 0:
            raise ToolError(f"Invalid timeout value: {timeout_ms}. Timeout must be a positive number.")
        timeout_ms = min(timeout_ms or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        description = args.get("description") if isinstance(args.get("description"), str) else ""
        cwd = await confine(ctx, args.get("workdir") or ctx.context.directory, kind="directory")
        if not os.path.isdir(cwd):
            raise ToolError(f"Working directory does not exist: {cwd}")
        for word in shellparse.path_arguments(command):
            await confine(ctx, os.path.expanduser(word) if word.startswith("~") else word, kind="file")
        patterns, always = shellparse.permission_patterns(command)
        await ctx.ask("bash", patterns, metadata={"command": command, "description": description}, always=always)
        from auth_app.tokens import roots_of

        roots = await free_db(roots_of)(ctx.context.user)
        env = child_environment(home=roots[0] if roots else cwd)
        return await self._execute(command, cwd, env, timeout_ms, description, ctx, roots)

    async def _execute(self, command: str, cwd: str, env: dict, timeout_ms: int, description: str,
                       ctx: ToolContext, roots: list[str]) -> ToolResult:
        try:
            process = await sandbox.start(
                ctx.context.user, [shell_path(), "-c", command], cwd=cwd, env=env, roots=roots,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        except sandbox.SandboxUnavailable as error:
            raise ToolError(error.message) from error
        chunks: list[str] = []
        last_update = 0.0

        async def pump() -> None:
            nonlocal last_update
            while True:
                data = await process.stdout.read(65536)
                if not data:
                    return
                chunks.append(data.decode("utf-8", errors="replace"))
                now = time.monotonic()
                if now - last_update >= UPDATE_EVERY:
                    last_update = now
                    await ctx.update(metadata={"output": "".join(chunks)[-MAX_METADATA:], "description": description})

        reader = asyncio.ensure_future(pump())
        aborter = asyncio.ensure_future(ctx.abort.wait())
        timed_out = aborted = False
        try:
            done, _ = await asyncio.wait({reader, aborter}, timeout=timeout_ms / 1000,
                                         return_when=asyncio.FIRST_COMPLETED)
            if reader not in done:
                aborted = aborter in done
                timed_out = not aborted
                await asyncio.to_thread(kill_group, process.pid)
                try:
                    await asyncio.wait_for(reader, 2)
                except (asyncio.TimeoutError, Exception):
                    reader.cancel()
            exit_code = await process.wait()
        finally:
            aborter.cancel()
            if process.returncode is None:
                await asyncio.to_thread(kill_group, process.pid)
                reader.cancel()
        output = "".join(chunks)
        notes = []
        if timed_out:
            notes.append(f"bash tool terminated command after exceeding timeout {timeout_ms} ms")
        if aborted:
            notes.append("User aborted the command")
        if notes:
            output += "\n\n<bash_metadata>\n" + "\n".join(notes) + "\n</bash_metadata>"
        shown, truncated = truncate(output)
        return ToolResult(output=shown, title=description or command, metadata={
            "output": output[-MAX_METADATA:], "exit": exit_code, "description": description, "truncated": truncated})
