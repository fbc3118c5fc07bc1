"""Resident sandboxes: one long-lived sandbox per user (and mount set) that runs the server's own short
programs on the user's files (git for project detection, vcs.*, file status, workspaces, `git init`,
snapshots), instead of a new sandbox per program.

A new sandbox costs a few milliseconds (bubblewrap's namespaces and mounts, then the prlimit and setpriv
execs), more than a `git status` itself, and every client polls such reads. A resident sandbox is built by
the same launcher with the same confinement (agentserver.sandbox.launcher.prepare: mounts, no network, limits, the
user's uid) and runs agentserver/sandbox/resident_child.py on the system's python3, which starts each program in it
and answers its status and output. What changes for the program: nothing it can see, except that the
sandbox's PID namespace is shared with the user's other short programs while they run; whatever a program
leaves running is killed when no program is running any more.

Only `sandbox.run` calls that are offline, expose nothing extra and write nowhere but the user's roots use
it. A call that finds its resident sandbox gone (or unable to start) runs in a one-shot sandbox; one whose
sandbox dies while its program runs fails with OSError (the program may have done part of its work), and
the next call starts a new one. Idle ones end after IDLE_SECONDS.
AGENTSERVER_SANDBOX_RESIDENT=off turns this off."""
from __future__ import annotations

import base64
import itertools
import json
import logging
import os
import select
import signal
import subprocess
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from agentserver.sandbox.launch import Launch

SYSTEM_PYTHON = "/usr/bin/python3"
IDLE_SECONDS = 30.0
MOST_RESIDENTS = 32
STARTUP_SECONDS = 10.0
GIVE_UP_AFTER = 3  # failed starts in a row: then this process stops trying
_CHILD_SOURCE = (Path(__file__).with_name("resident_child.py")).read_text()
_ids = itertools.count(1)
log = logging.getLogger("agentserver.sandbox.launcher")


class Gone(Exception):
    """The resident sandbox could not take the program (it had ended): run it in a one-shot sandbox instead."""


class Lost(OSError):
    """The resident sandbox ended while the program ran (it may have done part of its work): not retried."""


# bubblewrap's --die-with-parent follows the thread that started it: residents are started by one thread
# that lives as long as the server, not by whichever request thread (or runner thread) asked first.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-resident-spawner")


class _Resident:
    """One resident sandbox: bubblewrap started with the confinement and wrappers that sandbox.prepare
    built for the user (this is the launcher's own spawn, not a second way around it), running the child
    program, which starts every program inside that confinement."""

    def __init__(self, confinement: tuple[str, ...], wrappers: tuple[str, ...], env: dict[str, str]):
        argv = [*confinement, "--chdir", "/", "--", *wrappers, SYSTEM_PYTHON, "-I", "-S", "-c", _CHILD_SOURCE]
        self.process = _spawner.submit(
            subprocess.Popen, argv, cwd="/", env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True).result()
        ready, _, _ = select.select([self.process.stdout], [], [], STARTUP_SECONDS)
        if not ready or json.loads(self.process.stdout.readline() or b"{}").get("ready") is not True:
            self.close()
            raise Gone()
        self.used = time.monotonic()
        self._lock = threading.Lock()
        self._pending: dict[int, Future] = {}
        self._started: set[int] = set()
        self._alive = True
        threading.Thread(target=self._read, daemon=True, name="sandbox-resident").start()

    def _read(self) -> None:
        for line in self.process.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                break
            with self._lock:
                if answer.get("started"):
                    self._started.add(answer.get("id"))
                    continue
                future = self._pending.pop(answer.get("id"), None)
                self._started.discard(answer.get("id"))
            if future is not None:
                future.set_result(answer)
        with self._lock:
            self._alive = False
            pending, self._pending = self._pending, {}
            started, self._started = self._started, set()
        for ident, future in pending.items():
            # A program that never started can run elsewhere; one that did may have done part of its work.
            future.set_exception(Lost("the sandbox ended while the program ran") if ident in started else Gone())
        self.close()
        self.process.stdout.close()

    @property
    def alive(self) -> bool:
        return self._alive

    def idle_for(self, now: float) -> float:
        """Seconds since it last took a program, 0 while one runs (a busy sandbox is never closed for room)."""
        return 0.0 if self._pending else now - self.used

    def ask(self, request: dict, timeout: float | None) -> dict:
        future: Future = Future()
        line = (json.dumps(request) + "\n").encode()
        with self._lock:
            if not self._alive:
                raise Gone()
            self._pending[request["id"]] = future
            self.used = time.monotonic()
            try:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            except (OSError, ValueError):
                self._pending.pop(request["id"], None)
                raise Gone() from None
        try:
            # The child enforces the program's timeout; this only guards against a child that stopped answering.
            return future.result(None if timeout is None else timeout + 10)
        except FutureTimeout:
            self.close()
            raise Lost("the sandbox stopped answering") from None

    def close(self) -> None:
        """Kill the sandbox (its PID namespace dies with bubblewrap), without waiting for it."""
        self._alive = False
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.stdin.close()
        except (OSError, ValueError):
            pass
        threading.Thread(target=self.process.wait, daemon=True).start()


_residents: dict[tuple, _Resident] = {}
_lock = threading.Lock()
_failed_starts = [0]


def available() -> bool:
    from django.conf import settings

    return settings.SANDBOX_RESIDENT and _failed_starts[0] < GIVE_UP_AFTER and os.path.exists(SYSTEM_PYTHON)


def _resident_for(key: tuple, env: dict[str, str]) -> _Resident:
    now = time.monotonic()
    with _lock:
        for other_key, other in list(_residents.items()):
            if not other.alive or other.idle_for(now) > IDLE_SECONDS:
                del _residents[other_key]
                other.close()
        resident = _residents.get(key)
        if resident is None:
            if len(_residents) >= MOST_RESIDENTS:
                longest = max(_residents, key=lambda k: _residents[k].idle_for(now))
                if _residents[longest].idle_for(now) > 0:
                    _residents.pop(longest).close()
            try:
                resident = _residents[key] = _Resident(*key, env)
            except (OSError, ValueError, Gone):
                _failed_starts[0] += 1
                if _failed_starts[0] == GIVE_UP_AFTER:
                    log.warning("resident sandboxes do not start here; every program gets a one-shot sandbox")
                raise Gone() from None
            _failed_starts[0] = 0
        return resident


def run(launch: Launch, *, input: bytes | None, timeout: float | None) -> subprocess.CompletedProcess:
    """`launch` (from agentserver.sandbox.launcher.prepare) run in the user's resident sandbox; Gone when it could not
    be (the caller then runs it in a one-shot sandbox)."""
    resident = _resident_for((tuple(launch.confinement), tuple(launch.wrappers)), launch.env)
    request = {"id": next(_ids), "argv": launch.command, "cwd": launch.cwd, "env": launch.env, "timeout": timeout,
               "input": base64.b64encode(input).decode() if input is not None else None}
    answer = resident.ask(request, timeout)
    if answer.get("timeout"):
        raise subprocess.TimeoutExpired(launch.command, timeout)
    return subprocess.CompletedProcess(launch.argv, answer["returncode"], base64.b64decode(answer["stdout"]),
                                       base64.b64decode(answer["stderr"]))

