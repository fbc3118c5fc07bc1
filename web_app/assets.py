"""The web app's files: where they come from (settings.WEB_APP: a directory, or the URL of a hosted copy
relayed through this server, so it still runs on this origin) and how each is answered: its content type,
its cache policy (Vite's content-hashed names are immutable; anything else is revalidated), gzip when the
copy has it and the browser takes it, and the app's page with a Content-Security-Policy of its own and one
script of ours (SESSION_SCRIPT: a session that ended sends the person to the sign-in page)."""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import httpx
from django.conf import settings

from web_app.install import INFO_FILE, app_version

CONTENT_TYPES = {
    ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8", ".html": "text/html; charset=utf-8", ".json": "application/json",
    ".map": "application/json", ".webmanifest": "application/manifest+json", ".txt": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon", ".webp": "image/webp",
    ".jpg": "image/jpeg", ".gif": "image/gif", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf",
    ".otf": "font/otf", ".wasm": "application/wasm", ".aac": "audio/aac", ".mp3": "audio/mpeg",
    ".wav": "audio/wav", ".mp4": "video/mp4", ".webm": "video/webm",
}
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
_HASHED_NAME = re.compile(r"-[A-Za-z0-9_-]{8}\.[a-z0-9]+$")
_SAFE_PATH = re.compile(r"^(?:[A-Za-z0-9_@~+-][A-Za-z0-9_.@~+-]*/)*[A-Za-z0-9_@~+-][A-Za-z0-9_.@~+-]*$")
_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S)
_HEAD = re.compile(rb"<head\b[^>]*>", re.I)
# Ours, beside the app's files (a same-origin file: the page's policy allows it without a hash).
SESSION_SCRIPT = "agentserver-session.js"
_SESSION_SCRIPT_FILE = Path(__file__).parent / "page" / SESSION_SCRIPT


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    cache_control: str
    etag: str
    gzipped: bool = False


def content_type_of(relative: str) -> str:
    return CONTENT_TYPES.get(Path(relative).suffix.lower(), "application/octet-stream")


def cache_control_of(relative: str) -> str:
    """A Vite build names what it emits after its content: such a name never changes meaning. Anything else
    (the app's root files, its unhashed fonts) may change with an upgrade, so the browser asks each time."""
    return IMMUTABLE if relative.startswith("assets/") and _HASHED_NAME.search(relative) else REVALIDATE


def is_asset_path(relative: str) -> bool:
    """Whether a URL path could name one of the app's files (never the page, never anything hidden)."""
    return (bool(_SAFE_PATH.match(relative)) and relative != "index.html" and relative != INFO_FILE
            and not relative.endswith(".gz") and "." in relative.rsplit("/", 1)[-1])


def with_session_script(page: bytes) -> bytes:
    """The app's page with our script first in its head, so that it runs before the app's own."""
    tag = f'<script src="/{SESSION_SCRIPT}"></script>'.encode()
    match = _HEAD.search(page)
    return page[:match.end()] + tag + page[match.end():] if match else tag + page


@functools.cache
def session_script() -> Asset:
    body = _SESSION_SCRIPT_FILE.read_bytes()
    return Asset(body=body, content_type=content_type_of(SESSION_SCRIPT), cache_control=REVALIDATE,
                 etag='"' + hashlib.sha256(body).hexdigest()[:32] + '"')


def page_policy(page: bytes) -> str:
    """opencode's own policy for its page (each inline script allowed by its hash), and no framing."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(page.decode("utf-8", errors="replace")))
    return ("default-src 'self'; "
            f"script-src 'self' 'wasm-unsafe-eval' {hashes}; ".replace("  ", " ") +
            "style-src 'self' 'unsafe-inline'; img-src 'self' data: https: blob:; font-src 'self' data:; "
            "media-src 'self' data:; connect-src * data: blob:; frame-ancestors 'none'; base-uri 'self'")


class DirectorySource:
    kind = "directory"

    def __init__(self, root: Path):
        self.root = root.resolve()

    def available(self) -> bool:
        return (self.root / "index.html").is_file()

    def page(self) -> bytes | None:
        try:
            return (self.root / "index.html").read_bytes()
        except OSError:
            return None

    def asset(self, relative: str, *, accepts_gzip: bool) -> Asset | None:
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        packed = path.with_name(path.name + ".gz")
        gzipped = accepts_gzip and packed.is_file()
        source = packed if gzipped else path
        stat = source.stat()
        return Asset(body=source.read_bytes(), content_type=content_type_of(relative),
                     cache_control=cache_control_of(relative), gzipped=gzipped,
                     etag=f'"{stat.st_size:x}-{stat.st_mtime_ns:x}{"-gz" if gzipped else ""}"')

    @functools.cached_property
    def version(self) -> str | None:
        try:
            return json.loads((self.root / INFO_FILE).read_text()).get("version")
        except (OSError, ValueError):
            pass
        try:
            return app_version(self.root)
        except OSError:
            return None


class UrlSource:
    """A hosted copy (say the one opencode itself falls back to), fetched per request and sent from here.
    A single-page host answers its page for any unknown path; a page where a file was asked is no file."""

    kind = "url"
    version = None

    def __init__(self, url: str):
        self.url = url.rstrip("/")
        self.client = httpx.Client(timeout=30, follow_redirects=True)

    def _get(self, relative: str) -> httpx.Response | None:
        try:
            response = self.client.get(f"{self.url}/{relative}")
        except httpx.HTTPError:
            return None
        return response if response.status_code == 200 else None

    def available(self) -> bool:
        return self.page() is not None

    def page(self) -> bytes | None:
        response = self._get("")
        return response.content if response is not None else None

    def asset(self, relative: str, *, accepts_gzip: bool) -> Asset | None:
        response = self._get(relative)
        if response is None or response.headers.get("content-type", "").startswith("text/html"):
            return None
        return Asset(body=response.content, content_type=content_type_of(relative),
                     cache_control=cache_control_of(relative),
                     etag='"' + hashlib.sha256(response.content).hexdigest()[:32] + '"')


@functools.cache
def source() -> DirectorySource | UrlSource:
    where = settings.WEB_APP
    if where.startswith(("http://", "https://")):
        return UrlSource(where)
    return DirectorySource(Path(where))


def describe() -> dict:
    """For GET /global/health: the app's version, whether it can be served, and what kind of copy it is."""
    app = source()
    pinned = app.kind == "directory" and app.root == Path(settings.WEB_APP_DIR).resolve()
    return {"version": app.version, "pinned": settings.WEB_APP_VERSION,
            "source": "bundled" if pinned else app.kind, "available": app.available()}
