"""One running language server: pygls' client speaks the protocol (framing, lsprotocol types); this module
adds what the agent needs from it — open/change a file, wait until the server has published diagnostics for
that version, workspace symbols, and a shutdown that leaves no process behind.

Everything here runs on the LSP manager's event loop (see manager.py)."""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import BaseLanguageClient

from agentserver.sandbox import launcher as sandbox
from projects_app.lsp.servers import LaunchSpec, language_id

log = logging.getLogger(__name__)

INITIALIZE_TIMEOUT = 45.0
REQUEST_TIMEOUT = 5.0
CONVERTER = get_converter()


def path_of(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return os.path.normpath(unquote(parsed.path))


def uri_of(path: str) -> str:
    from pathlib import Path

    return Path(path).as_uri()


def _configuration_value(settings: object, section: str | None) -> object:
    if not section:
        return settings
    value = settings
    for key in section.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


@dataclass
class _Document:
    version: int
    text: str


@dataclass
class _Published:
    at: float
    version: int | None


@dataclass
class LanguageClient:
    """A started, initialized server for one (user, root, server id)."""
    server_id: str
    root: str
    spec: LaunchSpec
    on_diagnostics: Callable[[str, str], None]  # (server id, path) → called on every publish
    diagnostics: dict[str, list[dict]] = field(default_factory=dict)
    documents: dict[str, _Document] = field(default_factory=dict)
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0  # waits and requests in flight: an idle reaper leaves a busy server alone
    _published: dict[str, _Published] = field(default_factory=dict)
    _changed: asyncio.Condition | None = None
    _rpc: BaseLanguageClient | None = None

    @property
    def pid(self) -> int | None:
        server = self._rpc._server if self._rpc is not None else None
        return server.pid if server is not None else None

    @property
    def running(self) -> bool:
        server = self._rpc._server if self._rpc is not None else None
        return server is not None and server.returncode is None

    async def start(self, user) -> None:
        self._changed = asyncio.Condition()
        rpc = BaseLanguageClient("agentserver", "1")
        self._rpc = rpc
        settings = self.spec.initialization or {}

        @rpc.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams):
            self._record(params)

        @rpc.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams):
            return [_configuration_value(settings, item.section) for item in params.items]

        @rpc.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params):
            return None

        @rpc.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params):
            return None

        @rpc.feature(types.CLIENT_UNREGISTER_CAPABILITY)
        def unregister(params):
            return None

        @rpc.feature(types.WORKSPACE_WORKSPACE_FOLDERS)
        def folders(params):
            return [types.WorkspaceFolder(uri=uri_of(self.root), name="workspace")]

        for quiet in (types.WINDOW_LOG_MESSAGE, types.PROGRESS, types.WINDOW_SHOW_MESSAGE, types.TELEMETRY_EVENT,
                      "$/typescriptVersion"):
            rpc.feature(quiet)(lambda params: None)

        # prepare reads the user's roots from the database: not on an event loop's thread.
        launch = await asyncio.to_thread(sandbox.prepare, user, self.spec.argv, cwd=self.root, env=self.spec.env,
                                         expose=self.spec.expose)
        await rpc.start_io(*launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True)
        # pygls pipes stderr and never reads it: drain it so a chatty server cannot block on a full pipe.
        asyncio.get_running_loop().create_task(self._drain_stderr())
        await asyncio.wait_for(rpc.initialize_async(types.InitializeParams(
            # None: in its sandbox's PID namespace our pid names no process, and servers that watch their
            # client's pid (vscode-languageserver does) would exit within seconds.
            process_id=None,
            root_uri=uri_of(self.root),
            root_path=self.root,
            workspace_folders=[types.WorkspaceFolder(uri=uri_of(self.root), name="workspace")],
            initialization_options=self.spec.initialization or None,
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                workspace=types.WorkspaceClientCapabilities(
                    configuration=True, workspace_folders=True,
                    did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                        dynamic_registration=True),
                    symbol=types.WorkspaceSymbolClientCapabilities()),
                text_document=types.TextDocumentClientCapabilities(
                    synchronization=types.TextDocumentSyncClientCapabilities(did_save=False),
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)),
            ),
        )), INITIALIZE_TIMEOUT)
        rpc.initialized(types.InitializedParams())
        if self.spec.initialization:
            rpc.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings=self.spec.initialization))

    async def _drain_stderr(self) -> None:
        server = self._rpc._server if self._rpc is not None else None
        if server is None or server.stderr is None:
            return
        while await server.stderr.read(65536):
            pass

    def _record(self, params: types.PublishDiagnosticsParams) -> None:
        path = path_of(params.uri)
        if path is None:
            return
        self.diagnostics[path] = [CONVERTER.unstructure(item, types.Diagnostic) for item in params.diagnostics]
        self._published[path] = _Published(at=time.monotonic(), version=params.version)
        self.on_diagnostics(self.server_id, path)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def touch(self, path: str, text: str) -> int:
        """didOpen the first time, didChange (whole text) after: the version the server will answer for."""
        self.last_used = time.monotonic()
        rpc = self._rpc
        uri = uri_of(path)
        document = self.documents.get(path)
        if document is None:
            kind = types.FileChangeType.Created
        else:
            kind = types.FileChangeType.Changed
        rpc.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri, type=kind)]))
        if document is None:
            self.diagnostics.pop(path, None)
            self.documents[path] = _Document(version=0, text=text)
            rpc.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
                uri=uri, language_id=language_id(path), version=0, text=text)))
            return 0
        version = document.version + 1
        self.documents[path] = _Document(version=version, text=text)
        rpc.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        return version

    async def wait_for_diagnostics(self, path: str, *, version: int, after: float, timeout: float,
                                   quiet: float) -> bool:
        """True once the server published for this version of `path` (or, for servers that send no version,
        after `after`) and then kept quiet for `quiet` seconds (a server often publishes twice for one
        change: syntax, then semantics); False at `timeout`."""
        deadline = time.monotonic() + timeout
        self.busy += 1
        try:
            return await self._wait(path, version=version, after=after, deadline=deadline, quiet=quiet)
        finally:
            self.busy -= 1
            self.last_used = time.monotonic()

    async def _wait(self, path: str, *, version: int, after: float, deadline: float, quiet: float) -> bool:
        def fresh() -> _Published | None:
            hit = self._published.get(path)
            if hit is None:
                return None
            if hit.version is not None:
                return hit if hit.version == version else None
            return hit if hit.at >= after else None

        async with self._changed:
            while True:
                hit = fresh()
                now = time.monotonic()
                if hit is not None and now - hit.at >= quiet:
                    return True
                if now >= deadline or not self.running:
                    return hit is not None
                wait = deadline - now if hit is None else min(deadline - now, quiet - (now - hit.at))
                try:
                    await asyncio.wait_for(self._changed.wait(), max(wait, 0.01))
                except asyncio.TimeoutError:
                    pass

    async def workspace_symbols(self, query: str) -> list[dict]:
        self.last_used = time.monotonic()
        self.busy += 1
        try:
            found = await asyncio.wait_for(
                self._rpc.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)), REQUEST_TIMEOUT)
        finally:
            self.busy -= 1
        out = []
        for item in found or []:
            data = CONVERTER.unstructure(item)
            location = data.get("location") or {}
            if "range" not in location:
                continue  # a WorkspaceSymbol whose range the server would resolve later; opencode skips these too
            out.append({"name": data["name"], "kind": data["kind"],
                        "location": {"uri": location["uri"], "range": location["range"]}})
        return out

    async def shutdown(self) -> None:
        """Ask politely (shutdown + exit, briefly), then end the server's whole process group."""
        rpc = self._rpc
        if rpc is None:
            return
        if self.running:
            try:
                await asyncio.wait_for(rpc.shutdown_async(None), 2.0)
                rpc.exit(None)
            except Exception:  # noqa: BLE001 - a hung or dead server is killed below either way
                pass
        sandbox.kill_group(self.pid, signal.SIGTERM)
        server = rpc._server
        if server is not None:
            try:
                await asyncio.wait_for(server.wait(), 3.0)
            except asyncio.TimeoutError:
                sandbox.kill_group(self.pid, signal.SIGKILL)
                await server.wait()
        try:
            await asyncio.wait_for(rpc.stop(), 2.0)
        except Exception:  # noqa: BLE001 - the reader task may already be gone with the process
            pass
