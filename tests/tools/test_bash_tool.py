import asyncio
import os

import pytest

from tests.tools.harness import run_tool


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().split()[2] != "Z"


def running(cmdline: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and open(f"/proc/{entry}/cmdline", "rb").read() == cmdline.encode():
                found.append(int(entry))
        except OSError:
            pass
    return found


async def test_it_runs_a_command_in_the_session_directory(ws):
    result = await run_tool(ws, "bash", {"command": "pwd; echo err >&2; exit 3", "description": "where am i"})
    assert result.output == f"{ws.repo}\nerr\n"
    assert result.metadata["exit"] == 3
    assert result.title == "where am i"


async def test_it_streams_output_into_the_running_part(ws):
    await run_tool(ws, "bash", {"command": "echo first; sleep 0.5; echo second"})
    streamed = [u["metadata"]["output"] for u in ws.updates if "metadata" in u]
    assert streamed and streamed[0] == "first\n"


async def test_its_environment_holds_no_server_secrets(ws, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "s3cret")
    monkeypatch.setenv("DATABASE_URL", "postgres://x")
    monkeypatch.setenv("AGENTSERVER_FERNET_KEYS", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    result = await run_tool(ws, "bash", {"command": "env"})
    for name in ("SECRET_KEY", "DATABASE_URL", "AGENTSERVER_", "DJANGO_", "OPENAI_API_KEY"):
        assert name not in result.output
    assert "PATH=" in result.output


async def test_it_stops_a_command_at_its_timeout(ws):
    result = await run_tool(ws, "bash", {"command": "echo start; sleep 30", "timeout": 300})
    assert result.output.startswith("start\n")
    assert "bash tool terminated command after exceeding timeout 300 ms" in result.output


async def test_abort_kills_the_whole_process_group(ws):
    abort = asyncio.Event()
    # `$!` would be a pid inside the sandbox's PID namespace: find the sleep by its unique command line instead.
    task = asyncio.ensure_future(run_tool(ws, "bash", {"command": "sleep 600.25 & echo started; wait"}, abort=abort))
    for _ in range(200):
        if ws.updates and running("sleep\x00600.25\x00"):
            break
        await asyncio.sleep(0.05)
    [pid] = running("sleep\x00600.25\x00")
    assert alive(pid)
    abort.set()
    result = await asyncio.wait_for(task, 10)
    assert "User aborted the command" in result.output
    for _ in range(100):
        if not alive(pid):
            break
        await asyncio.sleep(0.05)
    assert not alive(pid)


async def test_it_rejects_a_non_positive_timeout(ws):
    from sessions_app.runtime.tools.base import ToolError

    with pytest.raises(ToolError, match="Invalid timeout value"):
        await run_tool(ws, "bash", {"command": "true", "timeout": -1})
