"""One terminal: a ptyprocess child, its non-blocking reader and writer on the event loop, the scrollback and
the attached subscribers. Everything here runs on the worker's event loop thread; nothing blocks it (no
PtyProcess.read/wait/close-with-sleep, input is queued behind add_writer)."""
from __future__ import annotations

import asyncio
import contextvars
import ctypes
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ptyprocess import PtyProcess

from pty_app.buffer import RingBuffer, complete_prefix_length

log = logging.getLogger(__name__)

READ_SIZE = 65536
# Coalesce what the kernel already buffered (it hands out ~4 KB per read) into one frame of at most this.
COALESCE_LIMIT = 256 * 1024
_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: if the worker is killed outright (SIGKILL, OOM), the shell
    # still gets SIGHUP instead of living on as an orphan.
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGHUP)


class Subscriber(Protocol):
    def push(self, item: tuple) -> None:
        """("output", offset, data: bytes, text: str) or ("exit", exit_code)."""


@dataclass
class SpawnSpec:
    pty_id: str
    owner_id: int
    directory: str
    argv: list[str]
    cwd: str
    env: dict[str, str]
    rows: int = 24
    cols: int = 80


def session_members(session_id: int) -> list[int]:
    """Processes whose session is `session_id`: the shell and every job it started, whatever their group."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        # After "(comm) ": state ppid pgrp session ...
        if len(fields) > 3 and int(fields[3]) == session_id:
            members.append(int(entry))
    return members


def signal_session(leader: int, sig: int) -> None:
    """Signal the terminal's whole process group and every other process of its session."""
    try:
        os.killpg(leader, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in session_members(leader):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


@dataclass
class Terminal:
    spec: SpawnSpec
    buffer_limit: int
    max_pending_input: int
    on_exit: Callable[["Terminal"], None]
    # Output for watchers in other workers (the manager forwards it through the channel layer).
    remote_forward: Callable[[tuple], None] | None = None
    proc: PtyProcess | None = None
    fd: int = -1
    subscribers: set = field(default_factory=set)
    remote_watchers: set = field(default_factory=set)
    exit_code: int | None = None
    removed: bool = False  # killed on purpose (remove / idle / shutdown): no pty.exited for a removal
    closed: bool = False

    def __post_init__(self):
        self.ring = RingBuffer(self.buffer_limit)
        self.pending_input = bytearray()
        self._carry = b""  # the tail of the last read that ended inside a UTF-8 character
        self.last_activity = time.monotonic()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ready: asyncio.Event | None = None
        self._finishing = False
        self._paused = False
        self._pause_reasons: set = set()

    @property
    def id(self) -> str:
        return self.spec.pty_id

    @property
    def finishing(self) -> bool:
        """Its end is under way (drain, reap, close): nobody needs to end it again."""
        return self._finishing

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc else 0

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop) -> int:
        self.loop = loop
        self.ready = asyncio.Event()
        spec = self.spec
        # spec.argv is sandbox.prepare's launch (pty_app/services.py): the user's shell inside their sandbox.
        self.proc = PtyProcess.spawn(spec.argv, cwd=spec.cwd, env=spec.env, dimensions=(spec.rows, spec.cols),
                                     preexec_fn=_die_with_parent)
        # ptyprocess sleeps 0.1 s in close() and terminate(); we reap ourselves and never want the loop to sleep.
        self.proc.delayafterclose = 0
        self.proc.delayafterterminate = 0
        self.fd = self.proc.fd
        os.set_blocking(self.fd, False)
        # A clean context: callbacks must not inherit the request's asgiref executors (they outlive it).
        contextvars.Context().run(loop.add_reader, self.fd, self._on_readable)
        return self.proc.pid

    def leader_alive(self) -> bool:
        """waitpid(WNOHANG) through ptyprocess; reaps the leader when it has exited."""
        if self.proc is None:
            return False
        try:
            return self.proc.isalive()
        except Exception:  # noqa: BLE001  (ptyprocess raises its own error when waitpid fails)
            return False

    def terminate(self) -> None:
        """Kill the whole session (remove, idle reaping): SIGHUP now, SIGKILL for whatever is left shortly."""
        self.removed = True
        if self.proc is None or self.closed:
            return
        signal_session(self.proc.pid, signal.SIGHUP)
        signal_session(self.proc.pid, signal.SIGCONT)
        self._create_task(self._escalate())

    async def _escalate(self) -> None:
        await asyncio.sleep(1.0)
        if self.proc is not None:
            signal_session(self.proc.pid, signal.SIGKILL)
        if not self._finishing:
            self.finish()

    def finish(self) -> None:
        """The leader exited or the slave side closed: drain, reap, close, tell everyone (once)."""
        if self._finishing:
            return
        self._finishing = True
        if self.loop is not None and self.fd >= 0:
            self.loop.remove_reader(self.fd)
            self.loop.remove_writer(self.fd)
            self._drain()
        self._create_task(self._reap())

    async def _reap(self) -> None:
        delay, waited = 0.002, 0.0
        while self.leader_alive():
            if waited > 2.0:
                # The slave closed but the leader lingers (or ignores HUP): it goes with its session.
                signal_session(self.proc.pid, signal.SIGKILL)
            await asyncio.sleep(delay)
            waited += delay
            delay = min(delay * 2, 0.1)
        proc = self.proc
        if proc.exitstatus is not None:
            self.exit_code = proc.exitstatus
        elif proc.signalstatus is not None:
            self.exit_code = 128 + proc.signalstatus
        else:
            self.exit_code = 0
        try:
            proc.close(force=True)
        except Exception:  # noqa: BLE001  (closing an fd the kernel already hung up)
            pass
        self.closed = True
        self.fd = -1
        self._broadcast(("exit", self.exit_code))
        self.on_exit(self)

    def _create_task(self, coro) -> asyncio.Task:
        task = self.loop.create_task(coro, context=contextvars.Context())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)
        return task

    # -- output ----------------------------------------------------------------------------------------
    def _on_readable(self) -> None:
        chunks, size, eof = [], 0, False
        while size < COALESCE_LIMIT:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError:  # EIO: the child exited / every slave fd closed
                eof = True
                break
            if not data:
                eof = True
                break
            chunks.append(data)
            size += len(data)
        if chunks:
            self._emit(b"".join(chunks))
        if eof:
            self.finish()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, READ_SIZE)
            except OSError:
                break
            if not data:
                break
            self._emit(data)
        if self._carry:
            carry, self._carry = self._carry, b""
            self._publish(carry)

    def _emit(self, data: bytes) -> None:
        if self._carry:
            data = self._carry + data
            self._carry = b""
        cut = complete_prefix_length(data)
        if cut < len(data):
            data, self._carry = data[:cut], data[cut:]
        if data:
            self._publish(data)

    def _publish(self, data: bytes) -> None:
        self.last_activity = time.monotonic()
        offset = self.ring.append(data)
        item = ("output", offset, data, data.decode("utf-8", "replace"))
        self._broadcast(item)

    def _broadcast(self, item: tuple) -> None:
        for subscriber in list(self.subscribers):
            subscriber.push(item)
        if self.remote_watchers and self.remote_forward is not None:
            self.remote_forward(item)

    def pause_reading(self, reason: object) -> None:
        """Back-pressure: stop draining the master while any reader (a slow socket, a lagging channel
        layer) is behind, so a fast child blocks on its own writes instead of our memory growing."""
        self._pause_reasons.add(reason)
        if not self._paused and not self._finishing and self.fd >= 0:
            self._paused = True
            self.loop.remove_reader(self.fd)

    def resume_reading(self, reason: object) -> None:
        self._pause_reasons.discard(reason)
        if self._paused and not self._pause_reasons:
            self._paused = False
            if not self._finishing and self.fd >= 0:
                contextvars.Context().run(self.loop.add_reader, self.fd, self._on_readable)

    # -- input -----------------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        if self.closed or self._finishing or not data:
            return
        self.last_activity = time.monotonic()
        if self.pending_input:
            if len(self.pending_input) + len(data) > self.max_pending_input:
                log.warning("pty %s: input dropped, the child is not reading", self.id)
                return
            self.pending_input += data
            return
        try:
            written = os.write(self.fd, data)
        except BlockingIOError:
            written = 0
        except OSError:
            return
        if written < len(data):
            self.pending_input += data[written:]
            contextvars.Context().run(self.loop.add_writer, self.fd, self._on_writable)

    def _on_writable(self) -> None:
        try:
            written = os.write(self.fd, self.pending_input[:READ_SIZE])
        except BlockingIOError:
            return
        except OSError:
            written = len(self.pending_input)
        del self.pending_input[:written]
        if not self.pending_input:
            self.loop.remove_writer(self.fd)

    def resize(self, rows: int, cols: int) -> None:
        if self.proc is not None and not self.closed:
            self.proc.setwinsize(rows, cols)  # the kernel sends SIGWINCH to the foreground group

    # -- subscribers -----------------------------------------------------------------------------------
    def attach(self, subscriber: Subscriber, cursor: int) -> tuple[bytes, int]:
        """Register a subscriber and return (replay from `cursor`, cursor after it), atomically with respect
        to new output: there is no await between the two."""
        self.subscribers.add(subscriber)
        self.last_activity = time.monotonic()
        return self.ring.since(cursor), self.ring.total

    def detach(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)
        self.last_activity = time.monotonic()

    def attached(self) -> bool:
        return bool(self.subscribers or self.remote_watchers)


_TASKS: set[asyncio.Task] = set()
