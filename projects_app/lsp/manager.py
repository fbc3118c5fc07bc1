"""The language-server manager of this worker: one server per (user, root, server id), started on the first
file that needs it, stopped when idle, on `instance.dispose` of its directory, and at exit.

The servers' connections live on the manager's own event loop in a background thread, so the agent runner
(on the worker's loop) and the synchronous views (in threads) reach them the same way, and a slow server never
stalls the loop that streams tokens to clients."""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings

from agentserver import paths
from agentserver.context import RuntimeContext
from agentserver.sandbox import launcher as sandbox
from agentserver.workers import shutdown
from projects_app.lsp.servers import ServerInfo, servers_for

if TYPE_CHECKING:
    # The client (pygls, lsprotocol) is imported when a language server is first started: lsprotocol's
    # attrs classes cost about a fifth of a worker's start, and most workers never start one.
    from projects_app.lsp.client import LanguageClient

log = logging.getLogger(__name__)

# opencode's workspace-symbol filter: classes, functions, methods, interfaces, variables, constants, structs,
# enums; at most ten per server.
SYMBOL_KINDS = {5, 12, 6, 11, 13, 14, 23, 10}
SYMBOLS_PER_SERVER = 10

Key = tuple[int, str, str]  # (user id, root, server id)


@dataclass
class _Entry:
    client: LanguageClient
    context: RuntimeContext  # the instance that started it: where its events go
    directories: set[str] = field(default_factory=set)  # instances that used it (dispose stops it)


class LspManager:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._entries: dict[Key, _Entry] = {}
        self._spawning: dict[Key, asyncio.Task] = {}
        self._broken: set[Key] = set()

    # ---- plumbing: every coroutine below runs on the manager's loop -------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.create_task(self._reap_idle())
                    loop.run_forever()

                threading.Thread(target=run, name="lsp-manager", daemon=True).start()
                ready.wait()
                self._loop = loop
                shutdown.on_exit(self.shutdown)
            return self._loop

    def submit(self, coroutine) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coroutine, self._ensure_loop())

    async def run(self, coroutine):
        """Await `coroutine` on the manager's loop from any other loop."""
        return await asyncio.wrap_future(self.submit(coroutine))

    def call(self, coroutine, timeout: float):
        """Run `coroutine` on the manager's loop from a synchronous caller (a view's thread)."""
        return self.submit(coroutine).result(timeout)

    @property
    def started(self) -> bool:
        return self._loop is not None

    def _publish(self, context: RuntimeContext, type: str, properties: dict) -> None:
        from agentserver.events import publisher as events

        # From a plain worker thread: the event bus treats a running loop as the server's own loop.
        asyncio.get_running_loop().run_in_executor(None, events.publish_context, type, properties, context)

    # ---- clients -----------------------------------------------------------------------------------------

    async def clients_for(self, context: RuntimeContext, config: dict, file: str) -> list[LanguageClient]:
        """The running clients for `file`, starting the missing ones (opencode's getClients)."""
        if not paths.within_any(file, [context.boundary]):
            return []
        extension = os.path.splitext(file)[1] or os.path.basename(file)
        directory = context.directory if paths.is_within(file, context.directory) else context.boundary
        found = []
        for server in servers_for(config).values():
            if server.extensions and extension not in server.extensions:
                continue
            root = server.root(file, directory)
            if root is None:
                continue
            key: Key = (context.user.pk, root, server.id)
            if key in self._broken:
                continue
            entry = self._entries.get(key)
            if entry is None:
                task = self._spawning.get(key)
                if task is None:
                    task = asyncio.get_running_loop().create_task(self._spawn(key, server, context))
                    self._spawning[key] = task
                    task.add_done_callback(lambda _, key=key: self._spawning.pop(key, None))
                entry = await asyncio.shield(task)
                if entry is None:
                    continue
            entry.directories.add(context.directory)
            entry.client.last_used = time.monotonic()
            found.append(entry.client)
        return found

    async def _spawn(self, key: Key, server: ServerInfo, context: RuntimeContext) -> _Entry | None:
        user_id, root, server_id = key
        spec = server.launch(root)
        if spec is None:
            self._broken.add(key)
            return None

        def published(server_id: str, path: str) -> None:
            self._publish(context, "lsp.client.diagnostics", {"serverID": server_id, "path": path})

        from projects_app.lsp.client import LanguageClient

        client = LanguageClient(server_id=server_id, root=root, spec=spec, on_diagnostics=published)
        try:
            await client.start(context.user)
        except Exception:  # noqa: BLE001 - any start failure marks the server broken for this root, as opencode does
            log.exception("starting language server %s for %s", server_id, root)
            self._broken.add(key)
            await client.shutdown()
            return None
        client.last_used = time.monotonic()  # starting may have taken longer than the idle limit
        entry = _Entry(client=client, context=context, directories={context.directory})
        self._entries[key] = entry
        surplus = len(self._entries) - max(1, settings.LSP_MAX_SERVERS)
        if surplus > 0:
            by_age = sorted((k for k in self._entries if k != key), key=lambda k: self._entries[k].client.last_used)
            await self._stop(by_age[:surplus])
        self._publish(context, "lsp.updated", {})
        return entry

    async def _stop(self, keys: list[Key]) -> None:
        entries = [self._entries.pop(key) for key in keys if key in self._entries]
        await asyncio.gather(*(entry.client.shutdown() for entry in entries), return_exceptions=True)
        for context in {id(e.context): e.context for e in entries}.values():
            self._publish(context, "lsp.updated", {})

    async def _reap_idle(self) -> None:
        while True:
            idle = settings.LSP_IDLE_SECONDS
            await asyncio.sleep(max(1.0, min(60.0, idle / 4)))
            now = time.monotonic()
            stale = [key for key, entry in self._entries.items() if not entry.client.running
                     or (not entry.client.busy and now - entry.client.last_used > idle)]
            if stale:
                await self._stop(stale)

    # ---- operations --------------------------------------------------------------------------------------

    async def check(self, context: RuntimeContext, config: dict, files: list[str], *,
                    wait: float, quiet: float) -> dict[str, list[dict]]:
        """Touch `files` (waiting up to `wait` seconds for their diagnostics, settled after `quiet` seconds
        without another publication), then every file's diagnostics."""
        await asyncio.gather(*(self.touch(context, config, file, wait=wait, quiet=quiet) for file in files))
        return await self.diagnostics(context)

    async def touch(self, context: RuntimeContext, config: dict, file: str, *, wait: float, quiet: float) -> None:
        """Tell the file's servers its current text; wait up to `wait` seconds for their diagnostics, settled
        once a server has kept quiet for `quiet` seconds."""
        clients = await self.clients_for(context, config, file)
        if not clients:
            return
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return
        after = time.monotonic()
        waits = [client.wait_for_diagnostics(file, version=client.touch(file, text), after=after, timeout=wait,
                                             quiet=quiet) for client in clients]
        await asyncio.gather(*waits, return_exceptions=True)

    async def diagnostics(self, context: RuntimeContext) -> dict[str, list[dict]]:
        """Every file's diagnostics from the user's servers used by this instance (opencode's LSP.diagnostics)."""
        merged: dict[str, list[dict]] = {}
        for entry in self._entries_of(context):
            for path, items in entry.client.diagnostics.items():
                merged.setdefault(path, []).extend(items)
        return merged

    def _entries_of(self, context: RuntimeContext) -> list[_Entry]:
        return [entry for (user_id, _, _), entry in self._entries.items()
                if user_id == context.user.pk and context.directory in entry.directories]

    async def status(self, context: RuntimeContext) -> list[dict]:
        out = []
        for entry in self._entries_of(context):
            client = entry.client
            # opencode 1.18 gives the root relative to the instance directory ("" for the directory itself).
            root = os.path.relpath(client.root, context.directory)
            out.append({"id": client.server_id, "name": client.server_id, "root": "" if root == "." else root,
                        "status": "connected" if client.running else "error"})
        return out

    async def workspace_symbols(self, context: RuntimeContext, query: str) -> list[dict]:
        async def one(client: LanguageClient) -> list[dict]:
            try:
                found = await client.workspace_symbols(query)
            except Exception:  # noqa: BLE001 - one server failing leaves the others' answers
                log.warning("workspace/symbol failed on %s", client.server_id, exc_info=True)
                return []
            return [s for s in found if s["kind"] in SYMBOL_KINDS][:SYMBOLS_PER_SERVER]

        results = await asyncio.gather(*(one(e.client) for e in self._entries_of(context) if e.client.running))
        return [symbol for result in results for symbol in result]

    async def dispose(self, user_id: int, directory: str | None) -> None:
        """Stop the user's servers the instance at `directory` used or that run inside it (all of the user's
        servers for None), and forget their failures so the next edit tries again."""
        def covered(key: Key, directories: set[str]) -> bool:
            return key[0] == user_id and (directory is None or directory in directories
                                          or paths.is_within(key[1], directory))

        keys = [key for key, entry in self._entries.items() if covered(key, entry.directories)]
        self._broken = {key for key in self._broken if not covered(key, set())}
        await self._stop(keys)

    def shutdown(self) -> None:
        """On exit (agentserver.workers.shutdown): end every server's process group now (the loop may already be
        gone)."""
        for entry in list(self._entries.values()):
            sandbox.kill_group(entry.client.pid, signal.SIGTERM)
        self._entries.clear()


MANAGER = LspManager()
