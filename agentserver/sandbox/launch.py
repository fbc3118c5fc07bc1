"""What the launcher hands to whatever starts a process: the argv, environment and directory it decided on.

agentserver.sandbox.launcher makes a Launch (`prepare`); subprocess, agentserver.sandbox.process (a program the event
loop awaits) and agentserver.sandbox.resident (a program run in a resident sandbox) start one. It lives
apart from the launcher so those starters need not import the launcher that imports them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    # argv = [*confinement, "--chdir", cwd, "--", *wrappers, *command] when sandboxed: the parts that a
    # resident sandbox (agentserver.sandbox.resident) is built from and then runs.
    confinement: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
