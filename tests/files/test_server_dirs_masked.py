"""The server's own directories inside a person's root are masked from the file routes (issue 29): with the
live server's data dir inside alice's root, its files are refused (403 in the error shape) by every read,
left out of every listing, search and grep, refused through a symlink, and refused as a context's
directory; and the "Open project" dialog's search of her home answers folders only, two levels deep, as
opencode's."""
import os
from urllib.parse import quote

import pytest

from tests.files.server_inside_root import PLANTED_KEY
from tests.runner.test_restart_and_retry import Remote

READS = ["/file/content", "/api/fs/file"]


def _data_files(inside):
    return [inside.data / "secret_key", inside.data / "db.sqlite3"]


@pytest.mark.parametrize("url", READS)
def test_reading_a_file_of_the_data_dir_is_403(alice_inside, inside, url):
    home = inside.home
    for file in _data_files(inside):
        relative = os.path.relpath(file, home)
        for params in ({"directory": str(home), "path": relative},
                       {"directory": str(home), "path": str(file)},
                       {"directory": str(home / "repo"), "path": os.path.relpath(file, home / "repo")}):
            response = alice_inside.get(url, params=params)
            assert response.status_code == 403, (params, response.text)
            assert response.json()["name"] == "ForbiddenError"
            assert PLANTED_KEY not in response.text


def test_the_v2_raw_read_refuses_it_too(alice_inside, inside):
    path = quote(os.path.relpath(inside.data / "secret_key", inside.home))
    response = alice_inside.get(f"/api/fs/read/{path}", params={"directory": str(inside.home)})
    assert response.status_code == 403, response.text
    assert PLANTED_KEY not in response.text


def test_listings_of_the_root_omit_the_data_dir(alice_inside, inside):
    home, parent = str(inside.home), os.path.relpath(inside.data.parent, inside.home)
    (inside.data.parent / "README.md").write_text("the checkout\n")
    listed = alice_inside.get("/file", params={"directory": home, "path": parent})
    assert listed.status_code == 200, listed.text
    assert [node["name"] for node in listed.json()] == ["README.md"]
    for url in ("/api/fs/tree", "/api/fs/list"):
        response = alice_inside.get(url, params={"directory": home, "path": parent})
        assert response.status_code == 200, response.text
        assert [os.path.basename(node["path"]) for node in response.json()["data"]] == ["README.md"], url
    # Listing the data dir itself is refused.
    inner = alice_inside.get("/file", params={"directory": home, "path": os.path.relpath(inside.data, home)})
    assert inner.status_code == 403, inner.text


@pytest.mark.parametrize("sandbox", ["bwrap", "off"])
def test_find_and_grep_never_return_its_contents(alice_inside, inside, server_factory, sandbox):
    # A directory (not her home) whose tree holds the data dir: her own corners of it (HOME, worktrees,
    # snapshot store) are mounted in her sandbox below it, and without a sandbox ripgrep sees all of it.
    (inside.data.parent / "notes.txt").write_text("NEEDLE-7f3a in a note\n")
    own = inside.data / "users" / str(alice_inside.user.pk) / "home"
    own.mkdir(parents=True, exist_ok=True)
    (own / "needle.txt").write_text("NEEDLE-7f3a at home\n")
    (inside.data / "secret.txt").write_text("NEEDLE-7f3a in the data dir\n")
    where = {"directory": str(inside.data.parent)}
    if sandbox == "off":
        unconfined = server_factory({**inside.live.env, "AGENTSERVER_SANDBOX": "off"})
        alice_inside = Remote(alice_inside, unconfined.url)

    grep = alice_inside.get("/find", params={**where, "pattern": "NEEDLE-7f3a"})
    assert grep.status_code == 200, grep.text
    assert [m["path"]["text"] for m in grep.json()] == ["notes.txt"]
    v2 = alice_inside.post("/api/fs/grep", params=where, json={"pattern": "NEEDLE-7f3a", "include": "*"})
    assert [m["path"]["text"] for m in v2.json()["data"]] == ["notes.txt"]

    for query in ("needle", "secret", "data", "users"):
        found = alice_inside.get("/find/file", params={**where, "query": query, "dirs": "true"})
        assert found.status_code == 200, found.text
        assert not [p for p in found.json() if p.startswith("data")], (query, found.json())
        searched = alice_inside.post("/api/fs/search", params=where, json={"query": query})
        assert not [p for p in searched.json()["data"] if p.startswith("data")], query
        v2find = alice_inside.get("/api/fs/find", params={**where, "query": query})
        assert not [e for e in v2find.json()["data"] if e["path"].startswith("data")], query


def test_a_symlink_into_the_data_dir_is_refused_and_not_listed(alice_inside, inside):
    repo = inside.home / "repo"
    (repo / "key").symlink_to(inside.data / "secret_key")
    (repo / "state").symlink_to(inside.data)
    try:
        for url in READS:
            response = alice_inside.get(url, params={"directory": str(repo), "path": "key"})
            assert response.status_code == 403, response.text
        listed = alice_inside.get("/file", params={"directory": str(repo), "path": "state"})
        assert listed.status_code == 403, listed.text
        names = [node["name"] for node in alice_inside.get("/file", params={"directory": str(repo), "path": ""}).json()]
        assert "key" not in names and "state" not in names and "README.md" in names
    finally:
        (repo / "key").unlink()
        (repo / "state").unlink()


@pytest.mark.parametrize("inner", ["", "users"])
def test_a_directory_inside_the_data_dir_is_403(alice_inside, inside, inner):
    directory = str(inside.data / inner) if inner else str(inside.data)
    (inside.data / "users").mkdir(exist_ok=True)
    for method, url in (("GET", "/path"), ("GET", "/file"), ("GET", "/api/location"), ("POST", "/session")):
        response = alice_inside.client.request(method, url, params={"directory": directory, "path": "."},
                                               json={} if method == "POST" else None)
        assert response.status_code == 403, (url, response.text)
        assert response.json()["name"] == "ForbiddenError"


def test_the_home_search_answers_folders_only_two_levels_deep(alice_inside, inside):
    home = inside.home
    for folder in ("projects/app/src/deep", "projects/node_modules/pkg", "projects/.cache/x", ".config/tool"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    (home / "notes.md").write_text("x\n")
    (home / "projects" / "app" / "main.py").write_text("x\n")
    (home / "projects" / "link").symlink_to(home / "projects" / "app")
    expected = ["agentserver/", "projects/", "projects/app/", "repo/", "repo/src/"]
    # `agentserver/data/` (the server's data dir) is masked; `projects/link` is a symlink, not a folder.

    # opencode 1.18's web app, talking to the original routes, asks find.files with dirs=true and shows
    # every answer as a folder.
    found = alice_inside.get("/find/file", params={"directory": str(home), "query": "", "dirs": "true"})
    assert found.status_code == 200, found.text
    assert sorted(found.json()) == expected
    for query, best in (("app", "projects/app/"), ("proj", "projects/")):
        found = alice_inside.get("/find/file", params={"directory": str(home), "query": query, "dirs": "true"})
        assert found.json()[0] == best and all(p.endswith("/") for p in found.json()), found.json()
    assert alice_inside.get("/find/file", params={"directory": str(home), "query": "", "dirs": "false"}).json() == []
    v2 = alice_inside.get("/api/fs/find", params={"directory": str(home), "query": "", "type": "directory"})
    assert sorted(e["path"] + "/" for e in v2.json()["data"]) == expected
    # Anywhere else, files as before.
    elsewhere = alice_inside.get("/find/file", params={"directory": str(home / "projects"), "query": "main"})
    assert elsewhere.json() == ["app/main.py"]
