"""Every fs/vcs path stays inside the context boundary (the worktree): traversal, absolute paths outside and
symlinks out are refused; bob cannot point his context into alice's root; anonymous callers get 401."""
import os

import pytest

from tests.files.helpers import params, populate

READS = [("/api/fs/file", "get"), ("/api/fs/tree", "get"), ("/file/content", "get"), ("/file", "get")]


@pytest.mark.parametrize("url,method", READS)
def test_it_refuses_traversal_out_of_the_worktree(alice, url, method):
    r = alice.get(url, params=params(alice, path="../../etc/passwd"))
    assert r.status_code == 403, r.text
    assert r.json()["name"] == "ForbiddenError"


@pytest.mark.parametrize("url,method", READS)
def test_it_refuses_an_absolute_path_outside(alice, url, method):
    assert alice.get(url, params=params(alice, path="/etc/passwd")).status_code == 403
    assert alice.get(url, params=params(alice, path="/etc")).status_code == 403


def test_it_refuses_a_path_inside_the_root_but_outside_the_worktree(alice):
    (alice.root / "secret.txt").write_text("root secret\n")
    assert alice.get("/api/fs/file", params=params(alice, path="../secret.txt")).status_code == 403


def test_it_refuses_symlinks_that_lead_out(alice):
    (alice.root / "secret.txt").write_text("root secret\n")
    os.symlink("/etc/passwd", alice.repo / "passwd")
    os.symlink(alice.root / "secret.txt", alice.repo / "secret")
    os.symlink("/etc", alice.repo / "etc")
    for name in ("passwd", "secret"):
        r = alice.get("/api/fs/file", params=params(alice, path=name))
        assert r.status_code == 403, (name, r.text)
    assert alice.get("/api/fs/tree", params=params(alice, path="etc")).status_code == 403


def test_search_and_grep_do_not_follow_symlinks_out(alice):
    (alice.root / "outside").mkdir()
    (alice.root / "outside" / "leak.txt").write_text("TOPSECRET\n")
    os.symlink(alice.root / "outside", alice.repo / "linked")
    os.symlink(alice.root / "outside" / "leak.txt", alice.repo / "leak.txt")
    grep = alice.post("/api/fs/grep", params=params(alice), json={"pattern": "TOPSECRET"})
    assert grep.status_code == 200 and grep.json()["data"] == []
    found = alice.post("/api/fs/search", params=params(alice), json={"query": "leak"}).json()["data"]
    assert found == []


def test_a_nul_byte_in_a_path_is_400(alice):
    assert alice.get("/api/fs/file", params=params(alice, path="a\x00b")).status_code == 400


def test_bob_cannot_point_his_context_into_alices_root(alice, bob):
    populate(alice.repo)
    for url in ("/api/fs/file", "/api/fs/tree", "/file/content"):
        r = bob.get(url, params={"directory": str(alice.repo), "path": "README.md"})
        assert r.status_code == 403, (url, r.text)
    assert bob.post("/api/fs/grep", params={"directory": str(alice.repo)}, json={"pattern": "x"}).status_code == 403
    assert bob.post("/api/fs/search", params={"directory": str(alice.repo)}, json={"query": "x"}).status_code == 403
    assert bob.get("/api/vcs/status", params={"directory": str(alice.repo)}).status_code == 403
    assert bob.get("/api/vcs/diff", params={"directory": str(alice.repo)}).status_code == 403
    patch = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+y\n"  # well formed: the directory is what is refused
    r = bob.post("/api/vcs/patch", params={"directory": str(alice.repo)}, json={"patch": patch})
    assert r.status_code == 403


def test_bob_reading_an_absolute_path_in_alices_repo_from_his_own_context_is_403(alice, bob):
    r = bob.get("/api/fs/file", params={"directory": str(bob.repo), "path": str(alice.repo / "README.md")})
    assert r.status_code == 403


@pytest.mark.parametrize("method,url", [
    ("GET", "/api/fs/file?path=README.md"), ("GET", "/api/fs/tree"), ("POST", "/api/fs/search"),
    ("POST", "/api/fs/grep"), ("GET", "/api/vcs/status"), ("GET", "/api/vcs/diff"), ("POST", "/api/vcs/patch"),
    ("GET", "/file?path=."), ("GET", "/find/file?query=a"), ("GET", "/api/location"), ("GET", "/lsp"),
])
def test_anonymous_callers_get_401(anon, method, url):
    assert anon.request(method, url, json={} if method == "POST" else None).status_code == 401
