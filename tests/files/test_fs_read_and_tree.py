"""fs.file / fs.tree (v2) and /file/content, /file (original): content, listing, ignores, size cap."""
import base64

from projects_app import files
from tests.files.helpers import params, populate


def test_it_reads_a_text_file(alice):
    populate(alice.repo)
    r = alice.get("/api/fs/file", params=params(alice, path="src/hello.py"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["location"]["directory"] == str(alice.repo)
    assert body["data"] == {"type": "text", "content": "def hello():\n    return 'hello world'\n"}


def test_it_reads_a_binary_file_as_base64_with_its_mime_type(alice):
    populate(alice.repo)
    data = alice.get("/api/fs/file", params=params(alice, path="logo.png")).json()["data"]
    assert data["type"] == "binary" and data["encoding"] == "base64" and data["mimeType"] == "image/png"
    assert base64.b64decode(data["content"]).startswith(b"\x89PNG")


def test_the_original_route_reads_a_file_too(alice):
    populate(alice.repo)
    r = alice.get("/file/content", params=params(alice, path=str(alice.repo / "README.md")))
    assert r.json() == {"type": "text", "content": "hello\n"}


def test_it_refuses_a_file_over_the_size_cap_with_413(alice):
    (alice.repo / "big.txt").write_bytes(b"x" * (files.MAX_READ_BYTES + 1))
    r = alice.get("/api/fs/file", params=params(alice, path="big.txt"))
    assert r.status_code == 413
    assert r.json()["name"] == "PayloadTooLargeError"
    assert "too large" in r.json()["data"]["message"]


def test_a_missing_file_or_a_directory_is_404_and_no_path_400(alice):
    assert alice.get("/api/fs/file", params=params(alice, path="nope.txt")).status_code == 404
    assert alice.get("/api/fs/file", params=params(alice, path="")).status_code == 400
    r = alice.get("/api/fs/file", params=params(alice, path="."))
    assert r.status_code == 404 and r.json()["name"] == "NotFoundError"


def test_a_missing_path_parameter_is_400(alice):
    assert alice.get("/api/fs/file", params=params(alice)).status_code == 400
    assert alice.get("/file", params=params(alice)).status_code == 400


def test_it_lists_a_directory_with_directories_first_and_ignored_entries_marked(alice):
    populate(alice.repo)
    r = alice.get("/api/fs/tree", params=params(alice, path="."))
    assert r.status_code == 200, r.text
    nodes = r.json()["data"]
    by_name = {n["name"]: n for n in nodes}
    assert [n["type"] for n in nodes] == sorted((n["type"] for n in nodes), key=lambda t: t != "directory")
    assert by_name["src"] == {"name": "src", "path": "src/", "absolute": str(alice.repo / "src"),
                              "type": "directory", "ignored": False}
    assert by_name["build"]["ignored"] is True
    assert by_name["README.md"]["path"] == "README.md" and by_name["README.md"]["type"] == "file"


def test_it_lists_a_subdirectory_with_paths_relative_to_the_directory(alice):
    populate(alice.repo)
    nodes = alice.get("/file", params=params(alice, path="src")).json()
    assert [n["path"] for n in nodes] == ["src/hello.py", "src/util.py"]


def test_listing_a_file_or_a_missing_directory_is_404(alice):
    populate(alice.repo)
    assert alice.get("/api/fs/tree", params=params(alice, path="README.md")).status_code == 404
    assert alice.get("/api/fs/tree", params=params(alice, path="nowhere")).status_code == 404


def test_a_modified_file_comes_with_its_diff_against_head(alice):
    (alice.repo / "README.md").write_text("hello\nworld\n")
    data = alice.get("/file/content", params=params(alice, path="README.md")).json()
    assert data["content"] == "hello\nworld\n"
    assert "+world" in data["diff"]
    assert data["patch"] == {"oldFileName": "README.md", "newFileName": "README.md", "hunks": [
        {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 2, "lines": [" hello", "+world"]}]}
    assert set(alice.get("/file/content", params=params(alice, path="README.md")).json()) == \
        {"type", "content", "diff", "patch"}
    (alice.repo / "README.md").write_text("hello\n")
    assert alice.get("/api/fs/file", params=params(alice, path="README.md")).json()["data"] == \
        {"type": "text", "content": "hello\n"}
