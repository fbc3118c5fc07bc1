"""The one launcher of every process the server starts on behalf of a user: PTYs, the bash tool,
session.shell, command-template shell expansions, local MCP servers, formatters, language servers, and every
git or other external program run in a user's directory. A repository is hostile input (its git config and
attributes name programs), so even a read-only `git status` goes through here.

Callers describe what to run; this module decides how it is confined. `prepare` gives the wrapped argv and
environment for callers that own their spawning primitive (ptyprocess, the MCP stdio client); `run`, `popen`
and `start` cover subprocess.run, subprocess.Popen and asyncio subprocesses.

The environment always comes from `agentserver.childenv` (an allowlist, never the server's own)."""
from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentserver.childenv import safe_environment


class SandboxUnavailable(Exception):
    """The sandbox cannot start a process here (for instance bubblewrap is missing)."""


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: str


def _home_of(user, cwd: str) -> str:
    from auth_app.tokens import roots_of

    roots = roots_of(user) if user is not None else []
    return roots[0] if roots else cwd


def prepare(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None,
            expose: Sequence[str] = ()) -> Launch:
    """What to exec for `argv` run by `user` in `cwd`; `env` adds variables to the safe environment;
    `expose` names extra files or directories (a language server's install, the ripgrep binary) that the
    process may read and execute at their real paths."""
    environment = safe_environment(home=_home_of(user, cwd))
    if env:
        environment.update(env)
    return Launch(argv=list(argv), env=environment, cwd=cwd)


def run(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None, input: bytes | None = None,
        timeout: float | None = None, expose: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """subprocess.run with bytes output captured; stdin is empty unless `input` is given."""
    launch = prepare(user, argv, cwd=cwd, env=env, expose=expose)
    return subprocess.run(launch.argv, cwd=launch.cwd, env=launch.env, input=input, capture_output=True,
                          timeout=timeout, stdin=None if input is not None else subprocess.DEVNULL)


def popen(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None,
          expose: Sequence[str] = (), **kwargs) -> subprocess.Popen:
    launch = prepare(user, argv, cwd=cwd, env=env, expose=expose)
    kwargs.setdefault("start_new_session", True)
    return subprocess.Popen(launch.argv, cwd=launch.cwd, env=launch.env, **kwargs)


async def start(user, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None,
                expose: Sequence[str] = (), **kwargs) -> asyncio.subprocess.Process:
    launch = prepare(user, argv, cwd=cwd, env=env, expose=expose)
    kwargs.setdefault("start_new_session", True)
    return await asyncio.create_subprocess_exec(*launch.argv, cwd=launch.cwd, env=launch.env, **kwargs)
