"""fs.search (fuzzy path search) and fs.grep (ripgrep content search), v2 and original mounts, with limits."""
import pytest

from projects_app import files
from tests.files.helpers import params, populate


def test_it_finds_files_by_fuzzy_name_best_first(alice):
    populate(alice.repo)
    r = alice.post("/api/fs/search", params=params(alice), json={"query": "hello"})
    assert r.status_code == 200, r.text
    assert r.json()["data"][0] == "src/hello.py"


def test_it_skips_gitignored_files(alice):
    populate(alice.repo)
    found = alice.post("/api/fs/search", params=params(alice), json={"query": "out"}).json()["data"]
    assert "build/out.txt" not in found


def test_it_searches_directories_only_when_asked(alice):
    populate(alice.repo)
    found = alice.post("/api/fs/search", params=params(alice), json={"query": "src", "type": "directory"}).json()
    assert found["data"] == ["src/"]
    files_only = alice.post("/api/fs/search", params=params(alice), json={"query": "src", "type": "file"}).json()
    assert all(not p.endswith("/") for p in files_only["data"]) and "src/hello.py" in files_only["data"]


def test_the_tui_file_picker_route_answers_a_list_of_paths(alice):
    populate(alice.repo)
    r = alice.get("/find/file", params=params(alice, query="hello"))
    assert r.status_code == 200 and r.json() == ["src/hello.py"]
    assert sorted(alice.get("/find/file", params=params(alice, query="src", dirs="false")).json()) == \
        ["src/hello.py", "src/util.py"]


def test_search_honours_the_limit(alice):
    for i in range(30):
        (alice.repo / f"note{i:02}.md").write_text("x\n")
    found = alice.post("/api/fs/search", params=params(alice), json={"query": "note", "limit": 7}).json()["data"]
    assert len(found) == 7
    assert len(alice.get("/find/file", params=params(alice, query="note", limit=3)).json()) == 3


def test_search_limit_above_the_maximum_or_bad_bodies_are_400(alice):
    for body in ({"query": "a", "limit": files.SEARCH_LIMIT_MAX + 1}, {"query": "a", "limit": 0}, {},
                 {"query": 5}, {"query": "a", "type": "socket"}, []):
        r = alice.post("/api/fs/search", params=params(alice), json=body)
        assert r.status_code == 400, (body, r.text)
        assert r.json()["name"] == "BadRequestError"
    assert alice.get("/find/file", params=params(alice, query="a", limit=500)).status_code == 400


def test_grep_returns_ripgrep_matches(alice):
    populate(alice.repo)
    r = alice.post("/api/fs/grep", params=params(alice), json={"pattern": "hello w"})
    assert r.status_code == 200, r.text
    [match] = r.json()["data"]
    assert match["path"] == {"text": "src/hello.py"}
    assert match["line_number"] == 2
    assert match["lines"]["text"] == "    return 'hello world'\n"
    assert match["submatches"] == [{"match": {"text": "hello w"}, "start": 12, "end": 19}]
    assert isinstance(match["absolute_offset"], int)


def test_grep_respects_include_and_gitignore(alice):
    populate(alice.repo)
    (alice.repo / "notes.md").write_text("hello notes\n")
    found = alice.post("/api/fs/grep", params=params(alice), json={"pattern": "hello", "include": "*.md"}).json()
    assert sorted(m["path"]["text"] for m in found["data"]) == ["README.md", "notes.md"]
    everything = alice.post("/api/fs/grep", params=params(alice), json={"pattern": "hello"}).json()["data"]
    assert "build/out.txt" not in {m["path"]["text"] for m in everything}


def test_grep_honours_the_limit(alice):
    (alice.repo / "many.txt").write_text("match\n" * 50)
    found = alice.post("/api/fs/grep", params=params(alice), json={"pattern": "match", "limit": 5}).json()["data"]
    assert len(found) == 5


def test_grep_treats_a_dash_pattern_as_a_pattern(alice):
    (alice.repo / "flags.txt").write_text("use --files here\n")
    found = alice.post("/api/fs/grep", params=params(alice), json={"pattern": "--files"}).json()["data"]
    assert [m["path"]["text"] for m in found] == ["flags.txt"]


@pytest.mark.parametrize("body", [{}, {"pattern": 3}, {"pattern": "a", "limit": files.GREP_LIMIT_MAX + 1},
                                  {"pattern": "a", "limit": -1}, {"pattern": "(unclosed"}])
def test_grep_bad_bodies_are_400(alice, body):
    r = alice.post("/api/fs/grep", params=params(alice), json=body)
    assert r.status_code == 400, r.text
    assert r.json()["name"] == "BadRequestError"


def test_the_original_find_route_greps_too(alice):
    populate(alice.repo)
    found = alice.get("/find", params=params(alice, pattern="VALUE")).json()
    assert [(m["path"]["text"], m["line_number"]) for m in found] == [("src/util.py", 1)]
    assert alice.get("/find", params=params(alice)).status_code == 400


def test_symbol_search_is_empty_because_no_language_server_runs(alice, bob):
    assert alice.get("/find/symbol", params=params(alice, query="hello")).json() == []
    assert alice.get("/find/symbol", params=params(alice)).status_code == 400
    assert bob.get("/find/symbol", params={"directory": str(alice.repo), "query": "x"}).status_code == 403
