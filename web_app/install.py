"""Set-up: copy opencode's web app out of the pinned opencode binary into a directory agentserver serves.

Why from the binary: agentserver may not ship the app's code, and the machines it runs on reach no network
but the package registries. The `opencode-ai` npm package (the one opencode's clients and the tests run)
embeds the app, and `opencode serve` answers every path that is not its API with it. The binary's bundle
also carries the app's manifest (the path of every file), so the copy is exactly the app's files: each is
asked of a throwaway `opencode serve` on the loopback, and written as it was served. Text files get a
gzip sibling, sent to browsers that accept it."""
from __future__ import annotations

import glob
import gzip
import json
import mmap
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from django.conf import settings

INFO_FILE = "agentserver-web-app.json"
COMPRESSIBLE = (".js", ".mjs", ".css", ".svg", ".json", ".webmanifest", ".ttf", ".html", ".txt", ".wasm")
_MANIFEST_KEY = re.compile(rb'(?:^|,)(?:"([^"\\]+)"|([A-Za-z_$][\w$]*)):[A-Za-z_$][\w$]*')
_APP_VERSION = re.compile(rb'="(\d+\.\d+\.\d+)",[\w$]+=\{version:')
_ENTRY_SCRIPT = re.compile(r'<script[^>]+src="/(assets/index-[^"]+\.js)"')


class InstallError(Exception):
    pass


def opencode_binary() -> Path | None:
    """OPENCODE_BIN, else the npm install under .tools/ (scripts/web-app.sh puts it there)."""
    explicit = os.environ.get("OPENCODE_BIN")
    if explicit:
        return Path(explicit) if os.access(explicit, os.X_OK) else None
    pattern = str(settings.BASE_DIR / ".tools/node_modules/opencode-linux-*/bin/opencode")
    for candidate in sorted(glob.glob(pattern), key=lambda path: ("baseline" in path, path)):
        if os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def manifest_paths(binary: Path) -> list[str]:
    """The app's file paths, from the manifest object bundled in the binary: `{"index.html": a, "assets/…": b}`."""
    with binary.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        position = data.find(b'"index.html":')
        while position != -1:
            start = data.rfind(b"={", max(0, position - 1_000_000), position)
            end = data.find(b"}", position)
            if start != -1 and end != -1:
                body = data[start + 2:end]
                keys = [(quoted or bare).decode() for quoted, bare in _MANIFEST_KEY.findall(body)]
                if "index.html" in keys and any(k.startswith("assets/") and k.endswith(".js") for k in keys):
                    return [key for key in keys if not key.startswith("_")]  # _headers: a CDN's config
            position = data.find(b'"index.html":', position + 1)
    raise InstallError(f"{binary} carries no web app manifest (not an opencode binary with an embedded app?)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ThrowawayServer:
    """`opencode serve` on the loopback with an empty HOME, no network fetches, killed on exit."""

    def __init__(self, binary: Path):
        self.binary = binary
        self.home = Path(tempfile.mkdtemp(prefix="agentserver-web-app-"))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> ThrowawayServer:
        home = self.home
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
               "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state"),
               "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
               "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"}
        # Server-owned: the pinned opencode binary in .tools/, in a throwaway home; no user's files.
        self.process = subprocess.Popen(
            [str(self.binary), "serve", "--hostname", "127.0.0.1", "--port", str(self.port)],
            cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise InstallError(f"`{self.binary} serve` exited with status {self.process.returncode}")
            try:
                if httpx.get(f"{self.url}/global/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise InstallError(f"`{self.binary} serve` did not answer within 60 s")

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        shutil.rmtree(self.home, ignore_errors=True)


def _fetch_all(base_url: str, paths: list[str], target: Path) -> None:
    def fetch(client: httpx.Client, relative: str) -> None:
        response = client.get("/" + relative)
        content_type = response.headers.get("content-type", "")
        if response.status_code != 200 or (content_type.startswith("text/html") and not relative.endswith(".html")):
            raise InstallError(f"opencode did not serve its own file {relative} ({response.status_code} {content_type})")
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(response.content)
        if relative.endswith(COMPRESSIBLE):
            packed = gzip.compress(response.content, compresslevel=9, mtime=0)
            if len(packed) < len(response.content) * 0.9:
                destination.with_name(destination.name + ".gz").write_bytes(packed)

    with httpx.Client(base_url=base_url, timeout=30) as client, ThreadPoolExecutor(8) as pool:
        for future in [pool.submit(fetch, client, relative) for relative in paths]:
            future.result()


def app_version(directory: Path) -> str | None:
    """The version the app states in its entry script (`{version: "1.18.32"}`), or None."""
    entry = _ENTRY_SCRIPT.search((directory / "index.html").read_text(errors="replace"))
    if entry is None or not (directory / entry.group(1)).exists():
        return None
    found = _APP_VERSION.search((directory / entry.group(1)).read_bytes())
    return found.group(1).decode() if found else None


def install(*, binary: Path, target: Path, expect_version: str | None) -> dict:
    """Copy the app embedded in `binary` to `target` (replacing it); refuse another version than expected."""
    paths = manifest_paths(binary)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with ThrowawayServer(binary) as server:
            _fetch_all(server.url, paths, staging)
        version = app_version(staging)
        if expect_version and version != expect_version:
            raise InstallError(f"{binary} embeds web app {version}; agentserver pins {expect_version} "
                               "(AGENTSERVER_WEB_APP_VERSION)")
        # Server-owned, as above.
        released = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                                  env={"PATH": os.environ.get("PATH", ""), "HOME": tempfile.gettempdir()})
        info = {"version": version, "files": len(paths),
                "source": f"opencode {released.stdout.strip() or '?'} ({binary})"}
        (staging / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
        staging.chmod(0o755)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
        return info
    finally:
        shutil.rmtree(staging, ignore_errors=True)
