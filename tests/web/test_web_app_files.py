"""Serving opencode's web app: every file of the copy with its content type and cache policy (and gzip),
the app's page with its own Content-Security-Policy, the pinned version in /global/health, the copy made
from the opencode binary, and an operator's other copy: a directory, or the URL of a hosted one."""
import gzip
import http.server
import json
import re
import shutil
import threading
from functools import partial
from pathlib import Path

import httpx
import pytest

from tests.web.conftest import sign_in_form
from web_app.assets import CONTENT_TYPES, IMMUTABLE, REVALIDATE, with_session_script

pytestmark = pytest.mark.long_running(seconds=20)  # scheduled before shorter files (tests/conftest.py)


def app_files(copy: Path) -> list[str]:
    return sorted(str(p.relative_to(copy)) for p in copy.rglob("*")
                  if p.is_file() and p.suffix != ".gz" and p.name not in ("index.html", "agentserver-web-app.json"))


def test_every_file_of_the_app_is_served_with_its_type_and_cache_policy(server, web_app_copy):
    files = app_files(web_app_copy)
    assert len(files) > 900
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for relative in files:
            response = client.get("/" + relative, headers={"Accept-Encoding": "identity"})
            assert response.status_code == 200, relative
            assert response.content == (web_app_copy / relative).read_bytes(), relative
            assert response.headers["content-type"] == CONTENT_TYPES[Path(relative).suffix], relative
            hashed = relative.startswith("assets/") and re.search(r"-[\w-]{8}\.\w+$", relative)
            assert response.headers["cache-control"] == (IMMUTABLE if hashed else REVALIDATE), relative
            assert response.headers["x-content-type-options"] == "nosniff"


def test_every_asset_the_app_references_exists(server, web_app_copy):
    """Lazy chunks, fonts, sounds, workers, stylesheets: every asset path named in the app's code answers."""
    referenced = set()
    for source in list(web_app_copy.glob("assets/*.js")) + list(web_app_copy.glob("assets/*.css")) + [
            web_app_copy / "index.html"]:
        referenced |= set(re.findall(r"assets/[\w.-]+\.(?:js|css|woff2?|ttf|wasm|svg|png|aac|mp3|mp4|webm)",
                                     source.read_text(errors="replace")))
    assert len(referenced) > 100
    with httpx.Client(base_url=server.url, timeout=30) as client:
        missing = [path for path in sorted(referenced) if client.head("/" + path).status_code != 200]
    assert not missing, missing


def test_text_files_are_sent_gzipped_and_revalidated(server, web_app_copy):
    entry = re.search(r'src="/(assets/index-[^"]+\.js)"', (web_app_copy / "index.html").read_text()).group(1)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        packed = client.get("/" + entry, headers={"Accept-Encoding": "gzip"})
        assert packed.headers["content-encoding"] == "gzip"
        assert "accept-encoding" in packed.headers["vary"].lower()
        assert packed.content == (web_app_copy / entry).read_bytes()  # httpx unpacked it
        assert int(packed.headers["content-length"]) < len(packed.content) / 2
        manifest = client.get("/site.webmanifest")
        assert manifest.headers["content-type"] == "application/manifest+json"
        again = client.get("/site.webmanifest", headers={"If-None-Match": manifest.headers["etag"]})
        assert again.status_code == 304 and again.content == b""


def test_the_app_page_carries_a_policy_for_its_inline_script(alice_cookies, web_app_copy):
    page = alice_cookies.get("/", headers={"Accept": "text/html"})
    assert page.status_code == 200
    # opencode's page, with our script that notices an ended session (web_app/assets.py) first in its head
    assert page.content == with_session_script((web_app_copy / "index.html").read_bytes())
    policy = page.headers["content-security-policy"]
    assert re.search(r"script-src 'self' 'wasm-unsafe-eval' 'sha256-[A-Za-z0-9+/=]+'", policy)
    assert "frame-ancestors 'none'" in policy
    assert page.headers["cache-control"] == "no-store"
    # Client-side routes get the same page.
    route = alice_cookies.get("/L3RtcC9yZXBv/session/ses_x", headers={"Sec-Fetch-Dest": "document"})
    assert route.status_code == 200 and route.content == page.content


def test_health_reports_the_pinned_app(anon):
    health = anon.get("/global/health").json()
    assert health["webApp"] == {"version": "1.18.32", "pinned": "1.18.32", "source": "bundled", "available": True}
    assert anon.get("/api/health").json() == {"healthy": True}


def test_hidden_and_outside_paths_are_not_files(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for path in ("/agentserver-web-app.json", "/index.html", "/assets/..%2f..%2fetc%2fpasswd",
                     "/.git/config", "/assets/index.js.gz"):
            assert client.get(path).status_code == 404, path


def test_another_directory_and_a_missing_copy(server_factory, web_app_copy, tmp_path, alice):
    other = tmp_path / "copy"
    shutil.copytree(web_app_copy, other)
    (other / "agentserver-web-app.json").unlink()
    live = server_factory({"AGENTSERVER_WEB_APP": str(other)})
    health = httpx.get(f"{live.url}/global/health").json()["webApp"]
    assert health == {"version": "1.18.32", "pinned": "1.18.32", "source": "directory", "available": True}
    missing = server_factory({"AGENTSERVER_WEB_APP": str(tmp_path / "nothing-here")})
    assert httpx.get(f"{missing.url}/global/health").json()["webApp"]["available"] is False
    with httpx.Client(base_url=missing.url, timeout=30) as client:
        assert sign_in_form(client, "alice", "alice-password").status_code == 302
        page = client.get("/", headers={"Accept": "text/html"})
        assert page.status_code == 503 and "install_web_app" in page.text
        assert client.get("/account").status_code == 200


class _SinglePageHandler(http.server.SimpleHTTPRequestHandler):
    """A host of a single-page app: its page for every path it has no file for."""

    def log_message(self, *args):
        pass

    def send_head(self):
        if not Path(self.translate_path(self.path)).exists():
            self.path = "/index.html"
        return super().send_head()


def test_a_hosted_copy_is_relayed_on_this_origin(server_factory, web_app_copy, alice):
    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                           partial(_SinglePageHandler, directory=str(web_app_copy)))
    threading.Thread(target=host.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{host.server_address[1]}"
        live = server_factory({"AGENTSERVER_WEB_APP": url})
        assert httpx.get(f"{live.url}/global/health").json()["webApp"]["source"] == "url"
        with httpx.Client(base_url=live.url, timeout=30) as client:
            assert sign_in_form(client, "alice", "alice-password").status_code == 302
            page = client.get("/", headers={"Accept": "text/html"})
            assert page.content == with_session_script((web_app_copy / "index.html").read_bytes())
            assert "sha256-" in page.headers["content-security-policy"]
            favicon = client.get("/favicon-v3.svg")
            assert favicon.headers["content-type"] == "image/svg+xml"
            assert favicon.content == (web_app_copy / "favicon-v3.svg").read_bytes()
            assert client.get("/assets/no-such-chunk-AbCdEf12.js").status_code == 404  # the host's page is no file
    finally:
        host.shutdown()
        host.server_close()


def test_install_copies_the_app_out_of_the_opencode_binary(tmp_path, web_app_copy):
    from django.core.management import call_command

    from web_app.install import manifest_paths, opencode_binary

    binary = opencode_binary()
    assert binary is not None
    paths = manifest_paths(binary)
    assert "index.html" in paths and any(p.startswith("assets/index-") for p in paths)
    target = tmp_path / "app"
    call_command("install_web_app", target=str(target))
    assert app_files(target) == app_files(web_app_copy)
    info = json.loads((target / "agentserver-web-app.json").read_text())
    assert info["version"] == "1.18.32" and info["files"] == len(paths)
    sample = next(target.glob("assets/*.css.gz"))
    assert gzip.decompress(sample.read_bytes()) == sample.with_suffix("").read_bytes()


def test_install_refuses_a_binary_without_the_app(tmp_path):
    from django.core.management import CommandError, call_command

    fake = tmp_path / "opencode"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(CommandError, match="manifest"):
        call_command("install_web_app", binary=str(fake), target=str(tmp_path / "app"))
    assert not (tmp_path / "app").exists()
