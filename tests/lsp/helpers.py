"""Drive the agent's file tools through a real prompt (the scripted LLM decides the calls), and look at the
language-server processes the server started."""
from __future__ import annotations

import os
import time

from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt

TYPE_ERROR = "def compute_total(price: int, count: int) -> int:\n    return price * count\n\n\ncompute_total('a', 2)\n"
FIXED = TYPE_ERROR.replace("compute_total('a', 2)", "compute_total(3, 2)")


def set_config(persona, **entries) -> None:
    """Keys of the persona's global config (lsp, formatter, ...), beside the fake provider."""
    from projects_app.models import UserConfig

    config, _ = UserConfig.objects.get_or_create(user=persona.user)
    config.data = {**(config.data or {}), **entries}
    config.save(update_fields=["data"])


def new_session(persona) -> str:
    response = persona.post("/session", params={"directory": str(persona.repo)}, json={})
    assert response.status_code == 200, response.text
    return response.json()["id"]


def run_tool_call(persona, llm, session_id: str, tool: str, args: dict) -> dict:
    """One prompt whose model calls `tool` with `args`, then answers "done": that call's completed tool part."""
    llm.script(Reply(tool_calls=[(tool, args)]), Reply(text="done"))
    response = persona.post(f"/session/{session_id}/message", json=text_prompt(f"use {tool}"), timeout=120)
    assert response.status_code == 200, response.text
    parts = [p for m in persona.get(f"/session/{session_id}/message").json() for p in m["parts"]
             if p["type"] == "tool" and p["tool"] == tool]
    part = parts[-1]
    assert part["state"]["status"] == "completed", part["state"]
    return part


def _process_table() -> dict[int, tuple[int, str, bytes]]:
    """pid → (parent pid, state, cmdline) of every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        table[int(entry)] = (int(fields[1]), fields[0], cmdline)
    return table


def language_servers_of(server) -> set[int]:
    """pids of the live language servers (basedpyright) the test server started (its descendants), one each."""
    table = _process_table()

    def descends(pid: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            seen.add(pid)
            if pid == server.process.pid:
                return True
            pid = table.get(pid, (0, "", b""))[0]
        return False

    matched = {pid for pid, (_, state, cmdline) in table.items()
               if b"langserver" in cmdline and state != "Z" and descends(pid)}
    # In the sandbox a server is a chain (bwrap, its PID namespace's init, the program) that all carry its
    # command line: one server is the outermost of its chain; the PID namespace takes the rest with it.
    return {pid for pid in matched if table[pid][0] not in matched}


def alive(pids: set[int]) -> set[int]:
    table = _process_table()
    return {pid for pid in pids if pid in table and table[pid][1] != "Z"}


def wait_for(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()
