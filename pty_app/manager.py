"""The per-worker PTY manager: owns this worker's terminals (process, reader, scrollback), outliving any
WebSocket. Other workers reach a terminal through the channel layer: each manager listens on its own
channel (stored in the Pty row as worker_channel) for input / resize / kill / attach, and forwards output to
group `pty.<id>` while remote clients are attached.

Sync code (DRF views, services) calls into the loop with `manager.call(coroutine)`."""
from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import os
import signal
import threading
import time

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from agentserver.workers import liveness as workers
from agentserver.workers import loop as server_loop
from agentserver.workers import shutdown
from pty_app import conf, exits
from pty_app.terminal import SpawnSpec, Terminal, signal_session

log = logging.getLogger(__name__)

HOST = workers.HOST
GROUP_PREFIX = "pty."
_LIVENESS_SECONDS = 1.0


def group_name(pty_id: str) -> str:
    return f"{GROUP_PREFIX}{pty_id}"


_FORWARD_HIGH_WATER = 4 * 1024 * 1024
_FORWARD_LOW_WATER = 1024 * 1024


class SpawnFailed(Exception):
    pass


class _Backlog:
    def __init__(self) -> None:
        self.items: collections.deque = collections.deque()
        self.size = 0
        self.running = False


class PtyManager:
    def __init__(self) -> None:
        self.worker_id = workers.WORKER_ID  # unique per process life: rows name it, never the host name
        self.loop: asyncio.AbstractEventLoop | None = None
        self.layer = None
        self.channel_name: str | None = None
        self.terminals: dict[str, Terminal] = {}
        self.reserved: set[str] = set()  # rows written, processes not yet registered
        self._started: asyncio.Future | None = None
        self._tasks: set[asyncio.Task] = set()
        self._backlogs: dict[str, _Backlog] = {}
        workers.on_presumed_dead(self._end_all_terminals)  # once per manager, not per (re)start attempt

    # -- loop plumbing ---------------------------------------------------------------------------------
    def _task(self, coro) -> asyncio.Task:
        # Long-lived work gets an empty context: it must not hold on to a request's asgiref executor.
        task = self.loop.create_task(coro, context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def call(self, coro, timeout: float = 30):
        """Run a coroutine on the worker loop from a sync thread and return its result."""
        if self.loop is None:
            self.loop = server_loop.server_loop()
        return server_loop.call(self._started_then(coro), timeout=timeout)

    async def _started_then(self, coro):
        await self.ensure_started()
        return await coro

    async def ensure_started(self) -> None:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        if self._started is None:
            self._started = self.loop.create_future()
            try:
                await workers.start()  # announced before any row names this worker
                self.layer = get_channel_layer()
                if self.layer is not None:
                    self.channel_name = await self.layer.new_channel("ptyworker.")
                    self._task(self._control_loop())
                self._task(self._sweeper())
                shutdown.on_exit(self.shutdown)
                _graceful_hangup()
                self._started.set_result(True)
            except BaseException as error:
                started, self._started = self._started, None  # a later call retries (e.g. Redis was down)
                started.set_exception(error)
                started.exception()  # retrieved: no "never retrieved" warning when nobody else waits
                raise
        await asyncio.shield(self._started)

    def start_sync(self) -> str:
        """Make sure the manager runs; returns its channel name (for the Pty row)."""
        self.call(asyncio.sleep(0))
        return self.channel_name or ""

    # -- local terminals -------------------------------------------------------------------------------
    async def spawn(self, spec: SpawnSpec) -> int:
        terminal = Terminal(spec=spec, buffer_limit=conf.buffer_bytes(), max_pending_input=conf.max_pending_input(),
                            on_exit=self._on_exit)
        terminal.remote_forward = lambda item, t=terminal: self._forward(t, item)
        try:
            pid = terminal.start(self.loop)
        except Exception as error:  # noqa: BLE001  (exec failures arrive as assorted OSErrors)
            self.reserved.discard(spec.pty_id)
            raise SpawnFailed(str(error)) from error
        # Registered before un-reserving: a reader in another thread must never see the row as stale.
        self.terminals[spec.pty_id] = terminal
        self.reserved.discard(spec.pty_id)
        return pid

    def mark_ready(self, pty_id: str) -> None:
        """The row and pty.created are committed: exit handling may now delete and announce."""
        def _set():
            terminal = self.terminals.get(pty_id)
            if terminal is not None and terminal.ready is not None:
                terminal.ready.set()
        self.loop.call_soon_threadsafe(_set)

    def reserve(self, pty_id: str) -> None:
        """The row is about to be written and the process is not registered yet: not stale meanwhile."""
        self.reserved.add(pty_id)

    def release(self, pty_id: str) -> None:
        """The reservation is over without a process (spawning failed)."""
        self.reserved.discard(pty_id)

    def runs(self, pty_id: str) -> bool:
        """This worker runs the terminal's process."""
        return pty_id in self.terminals

    def holds(self, pty_id: str) -> bool:
        """This worker runs the terminal or is about to: its row is not stale."""
        return pty_id in self.terminals or pty_id in self.reserved

    def local_terminal(self, pty_id: str) -> Terminal | None:
        """The terminal when this worker runs it and it has not closed yet."""
        terminal = self.terminals.get(pty_id)
        return None if terminal is None or terminal.closed else terminal

    async def resize(self, pty_id: str, rows: int, cols: int) -> bool:
        terminal = self.terminals.get(pty_id)
        if terminal is None:
            return False
        terminal.resize(rows, cols)
        return True

    async def kill(self, pty_id: str) -> bool:
        terminal = self.terminals.get(pty_id)
        if terminal is None:
            return False
        terminal.terminate()
        return True

    def _on_exit(self, terminal: Terminal) -> None:
        self._task(self._announce_exit(terminal))

    async def _announce_exit(self, terminal: Terminal) -> None:
        if terminal.ready is not None and not terminal.removed:
            try:
                await asyncio.wait_for(terminal.ready.wait(), 10)
            except asyncio.TimeoutError:
                pass
        if terminal.remote_watchers and self.layer is not None:
            backlog = self._backlogs.get(terminal.id)
            while backlog is not None and backlog.running:
                await asyncio.sleep(0.01)  # the exit must follow the last output
            await self._group_send(terminal.id, {"type": "pty.exit", "exitCode": terminal.exit_code})
        self._backlogs.pop(terminal.id, None)
        try:
            await database_sync_to_async(exits.pty_exited)(
                pty_id=terminal.id, exit_code=terminal.exit_code, announce_exit=not terminal.removed)
        except Exception:  # noqa: BLE001  (the process is gone either way; keep the loop alive)
            log.exception("pty %s: recording the exit failed", terminal.id)
        # Only now: until the row is gone, readers must not take it for a stale one and delete it silently.
        self.terminals.pop(terminal.id, None)

    # -- remote forwarding and control ---------------------------------------------------------------------
    def _forward(self, terminal: Terminal, item: tuple) -> None:
        """Output for clients on other workers, in order, through one forwarder task per terminal. When the
        channel layer falls behind, the terminal stops being read (the child blocks on its writes) until the
        backlog drains: nothing is lost and this worker's memory stays bounded."""
        if item[0] != "output":
            return
        backlog = self._backlogs.setdefault(terminal.id, _Backlog())
        backlog.items.append({"type": "pty.output", "offset": item[1], "data": item[2]})
        backlog.size += len(item[2])
        if backlog.size > _FORWARD_HIGH_WATER:
            terminal.pause_reading("remote")
        if not backlog.running:
            backlog.running = True
            self._task(self._drain_backlog(terminal, backlog))

    async def _drain_backlog(self, terminal: Terminal, backlog: "_Backlog") -> None:
        try:
            while backlog.items:
                message = backlog.items.popleft()
                backlog.size -= len(message["data"])
                await self._group_send(terminal.id, message)
                if backlog.size < _FORWARD_LOW_WATER:
                    terminal.resume_reading("remote")
        finally:
            backlog.running = False
            terminal.resume_reading("remote")
            if terminal.id not in self.terminals:
                self._backlogs.pop(terminal.id, None)

    async def _group_send(self, pty_id: str, message: dict) -> None:
        try:
            await self.layer.group_send(group_name(pty_id), message)
        except Exception:  # noqa: BLE001
            log.exception("pty %s: forwarding output failed", pty_id)

    async def _reply(self, channel: str | None, message: dict) -> None:
        if channel:
            try:
                await self.layer.send(channel, message)
            except Exception:  # noqa: BLE001
                log.exception("pty: reply to %s failed", channel)

    async def _control_loop(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel_name)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001  (a broken Redis connection: retry, don't die)
                log.exception("pty control channel receive failed")
                await asyncio.sleep(1)
                continue
            try:
                await self._handle_control(message)
            except Exception:  # noqa: BLE001
                log.exception("pty control message failed: %s", message.get("type"))

    async def _handle_control(self, message: dict) -> None:
        kind, pty_id = message.get("type"), message.get("id", "")
        terminal = self.terminals.get(pty_id)
        reply = message.get("reply")
        if kind == "pty.input":
            if terminal is not None:
                terminal.write(message.get("data") or b"")
        elif kind == "pty.resize":
            ok = await self.resize(pty_id, int(message["rows"]), int(message["cols"]))
            await self._reply(reply, {"type": "pty.reply", "ok": ok})
        elif kind == "pty.kill":
            ok = await self.kill(pty_id)
            await self._reply(reply, {"type": "pty.reply", "ok": ok})
        elif kind == "pty.attach":
            if terminal is None or terminal.closed:
                await self._reply(reply, {"type": "pty.gone"})
                return
            terminal.remote_watchers.add(reply)
            terminal.last_activity = time.monotonic()
            replay = terminal.ring.since(int(message.get("cursor", 0)))
            await self._reply(reply, {"type": "pty.replay", "data": replay, "cursor": terminal.ring.total})
        elif kind == "pty.pause":
            if terminal is not None:
                terminal.pause_reading(reply)
        elif kind == "pty.resume":
            if terminal is not None:
                terminal.resume_reading(reply)
        elif kind == "pty.detach":
            if terminal is not None:
                terminal.resume_reading(reply)
                terminal.remote_watchers.discard(reply)
                terminal.last_activity = time.monotonic()

    async def remote_request(self, channel: str, message: dict, timeout: float | None = None) -> dict | None:
        """Send a control message to another worker and wait for its answer; None when nobody answers."""
        reply = await self.layer.new_channel("ptyreply.")
        await self.layer.send(channel, {**message, "reply": reply})
        try:
            return await asyncio.wait_for(self.layer.receive(reply), timeout or conf.remote_timeout())
        except asyncio.TimeoutError:
            return None

    async def remote_send(self, channel: str, message: dict) -> None:
        await self.layer.send(channel, message)

    # -- reaping -----------------------------------------------------------------------------------------
    async def _sweeper(self) -> None:
        next_orphan_check = 0.0
        while True:
            await asyncio.sleep(_LIVENESS_SECONDS)
            if time.monotonic() >= next_orphan_check:
                next_orphan_check = time.monotonic() + workers.ttl_seconds() / 2
                try:
                    await server_loop.free_db(exits.remove_dead_workers_terminals)()
                except Exception:
                    log.exception("removing dead workers' terminals")
            idle = conf.idle_seconds()
            now = time.monotonic()
            for terminal in list(self.terminals.values()):
                if terminal.closed or terminal.finishing:
                    continue
                # The leader can exit while a background job still holds the slave open: no EOF then.
                if not terminal.leader_alive():
                    terminal.finish()
                elif idle > 0 and not terminal.attached() and now - terminal.last_activity > idle:
                    log.info("pty %s: idle for %.0f s, reaping", terminal.id, idle)
                    terminal.terminate()

    def _end_all_terminals(self) -> None:
        """The other workers take this one for dead (no heartbeat for a TTL) and remove its terminals' rows:
        its terminals end too, rather than run on where no list shows them."""
        for terminal in list(self.terminals.values()):
            log.warning("pty %s: this worker is taken for dead, ending it", terminal.id)
            terminal.terminate()

    def shutdown(self) -> None:
        """On exit (agentserver.workers.shutdown): the worker is going away, and so do its terminals (whole sessions)
        and their rows."""
        terminals = list(self.terminals.values())
        for terminal in terminals:
            if terminal.proc is not None:
                signal_session(terminal.proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and any(t.leader_alive() for t in terminals):
            time.sleep(0.02)
        for terminal in terminals:
            if terminal.proc is not None:
                signal_session(terminal.proc.pid, signal.SIGKILL)
                terminal.leader_alive()
        try:
            from pty_app.store import ptys_of_worker

            exits.remove_orphans(ptys_of_worker(self.worker_id))  # announced: pty.deleted
        except Exception:  # noqa: BLE001  (the database may already be unreachable at exit)
            pass
        workers.stop()


def _graceful_hangup() -> None:
    """SIGHUP would end the worker without its exit hooks and leave the terminals' background jobs behind;
    turn it into the SIGTERM the ASGI server already handles (a clean stop, then the hooks). Only when nobody
    claimed SIGHUP."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:
        signal.signal(signal.SIGHUP, lambda *_: os.kill(os.getpid(), signal.SIGTERM))


_manager: PtyManager | None = None
_manager_lock = threading.Lock()


async def on_request_started(sender=None, **kwargs) -> None:
    """The first request starts the manager in every worker, PTYs or not: its heartbeat and its sweeper,
    which removes a dead worker's terminals in a bounded time (agentserver.workers.liveness)."""
    manager = get_manager()
    if manager._started is None:
        try:
            await manager.ensure_started()
        except Exception:
            log.exception("could not start the PTY manager")


def get_manager() -> PtyManager:
    global _manager
    if _manager is None:
        with _manager_lock:
            if _manager is None:
                _manager = PtyManager()
    return _manager
