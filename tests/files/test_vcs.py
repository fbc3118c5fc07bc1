"""vcs.status, vcs.diff (json and patch, worktree and default-branch modes) and vcs.patch, v2 and original."""
import subprocess

from tests.conftest import git
from tests.files.helpers import params, populate


def change_things(repo):
    populate(repo)
    (repo / "README.md").write_text("hello\nmore\n")
    (repo / "src" / "util.py").unlink()
    (repo / "new.txt").write_text("one\ntwo\n")
    (repo / "staged.txt").write_text("s\n")
    git(repo, "add", "staged.txt")


def test_status_lists_changed_files_with_line_counts(alice):
    change_things(alice.repo)
    r = alice.get("/api/vcs/status", params=params(alice))
    assert r.status_code == 200, r.text
    assert r.json()["data"] == [
        {"path": "README.md", "status": "modified", "additions": 1, "deletions": 0},
        {"path": "new.txt", "status": "untracked", "additions": 2, "deletions": 0},
        {"path": "src/util.py", "status": "deleted", "additions": 0, "deletions": 1},
        {"path": "staged.txt", "status": "added", "additions": 1, "deletions": 0},
    ]


def test_the_original_status_routes_use_1_18_shapes(alice):
    change_things(alice.repo)
    vcs = alice.get("/vcs/status", params=params(alice)).json()
    assert {"file": "new.txt", "additions": 2, "deletions": 0, "status": "added"} in vcs
    file_status = alice.get("/file/status", params=params(alice)).json()
    assert {"path": "src/util.py", "added": 0, "removed": 1, "status": "deleted"} in file_status


def test_a_clean_repo_and_a_plain_directory_have_no_changes(alice):
    assert alice.get("/api/vcs/status", params=params(alice)).json()["data"] == []
    plain = alice.root / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a\n")
    assert alice.get("/api/vcs/status", params={"directory": str(plain)}).json()["data"] == []
    assert alice.get("/api/vcs/diff", params={"directory": str(plain)}).json()["data"] == []


def test_diff_json_lists_file_diffs_against_head(alice):
    change_things(alice.repo)
    r = alice.get("/api/vcs/diff", params=params(alice))
    assert r.status_code == 200, r.text
    diffs = {d["file"]: d for d in r.json()["data"]}
    assert set(diffs) == {"README.md", "src/util.py", "staged.txt", "new.txt"}
    assert diffs["README.md"]["status"] == "modified" and diffs["README.md"]["additions"] == 1
    assert "+more" in diffs["README.md"]["patch"]
    assert diffs["src/util.py"]["status"] == "deleted" and diffs["src/util.py"]["deletions"] == 1
    assert diffs["new.txt"] == {**diffs["new.txt"], "status": "added", "additions": 2, "deletions": 0}


def test_diff_patch_is_unified_text_that_git_can_apply(alice, tmp_path):
    change_things(alice.repo)
    r = alice.get("/api/vcs/diff", params=params(alice, format="patch"))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/x-diff")
    assert "diff --git a/README.md b/README.md" in r.text and "+++ b/new.txt" in r.text
    raw = alice.get("/vcs/diff/raw", params=params(alice))
    assert raw.text == r.text
    # The patch re-applies on a clean checkout of HEAD.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(alice.repo), str(clone))
    subprocess.run(["git", "apply", "--check", "-"], cwd=clone, input=r.content, check=True)


def test_default_mode_diffs_against_the_merge_base_with_the_default_branch(alice):
    populate(alice.repo)
    git(alice.repo, "checkout", "-q", "-b", "feature")
    (alice.repo / "feature.txt").write_text("f\n")
    git(alice.repo, "add", "-A")
    git(alice.repo, "commit", "-q", "-m", "feature")
    (alice.repo / "README.md").write_text("changed\n")
    worktree = {d["file"] for d in alice.get("/api/vcs/diff", params=params(alice, mode="worktree")).json()["data"]}
    default = {d["file"] for d in alice.get("/api/vcs/diff", params=params(alice, mode="default")).json()["data"]}
    assert worktree == {"README.md"}
    assert default == {"README.md", "feature.txt"}
    original = alice.get("/vcs/diff", params=params(alice, mode="branch")).json()
    assert {d["file"] for d in original} == default
    assert {d["file"] for d in alice.get("/vcs/diff", params=params(alice, mode="git")).json()} == worktree


def test_bad_diff_queries_are_400(alice):
    assert alice.get("/api/vcs/diff", params=params(alice, format="xml")).status_code == 400
    assert alice.get("/api/vcs/diff", params=params(alice, mode="everything")).status_code == 400
    assert alice.get("/vcs/diff", params=params(alice)).status_code == 400


PATCH = """diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1,2 @@
 hello
+patched line
diff --git a/added.txt b/added.txt
new file mode 100644
--- /dev/null
+++ b/added.txt
@@ -0,0 +1 @@
+brand new
"""


def test_patch_applies_in_the_runtime_directory(alice):
    r = alice.post("/api/vcs/patch", params=params(alice), json={"patch": PATCH})
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"applied": True, "files": ["README.md", "added.txt"]}
    assert (alice.repo / "README.md").read_text() == "hello\npatched line\n"
    assert (alice.repo / "added.txt").read_text() == "brand new\n"
    status = {c["path"]: c["status"] for c in alice.get("/api/vcs/status", params=params(alice)).json()["data"]}
    assert status == {"README.md": "modified", "added.txt": "untracked"}


def test_the_original_apply_route_answers_applied(alice):
    r = alice.post("/vcs/apply", params=params(alice), json={"patch": PATCH})
    assert r.status_code == 200 and r.json() == {"applied": True}


def test_a_patch_that_does_not_apply_is_409_with_gits_message_and_changes_nothing(alice):
    bad = PATCH.replace(" hello\n", " goodbye\n")
    r = alice.post("/api/vcs/patch", params=params(alice), json={"patch": bad})
    assert r.status_code == 409
    assert "patch does not apply" in r.json()["data"]["message"]
    assert (alice.repo / "README.md").read_text() == "hello\n"
    assert not (alice.repo / "added.txt").exists()


def test_a_patch_naming_an_empty_or_nul_path_is_409_and_changes_nothing(alice):
    for line, spelled in (("--- a/README.md", '--- "a/READ\\000ME.md"'), ("+++ b/README.md", '+++ "b/READ\\000ME.md"'),
                          ("diff --git a/added.txt b/added.txt", "diff --git a/ b/added.txt")):
        r = alice.post("/vcs/apply", params=params(alice), json={"patch": PATCH.replace(line, spelled)})
        assert r.status_code == 409, r.text
        assert "no file can have" in r.json()["data"]["message"]
    assert (alice.repo / "README.md").read_text() == "hello\n"
    assert not (alice.repo / "added.txt").exists()


def test_garbage_and_malformed_bodies_are_400(alice):
    for body in ({"patch": "not a patch"}, {}, {"patch": 7}, {"patch": ""}):
        r = alice.post("/api/vcs/patch", params=params(alice), json=body)
        assert r.status_code == 400, (body, r.text)


def test_a_patch_reaching_outside_the_worktree_is_refused(alice):
    escape = PATCH.replace("added.txt", "../escaped.txt")
    r = alice.post("/api/vcs/patch", params=params(alice), json={"patch": escape})
    assert r.status_code == 403, r.text
    assert not (alice.root / "escaped.txt").exists()
    absolute = PATCH.replace("b/added.txt", "/tmp/abs-escape.txt").replace("a/added.txt", "/tmp/abs-escape.txt")
    assert alice.post("/api/vcs/patch", params=params(alice), json={"patch": absolute}).status_code == 403
    assert (alice.repo / "README.md").read_text() == "hello\n"


def test_a_patch_through_a_symlink_out_is_refused(alice):
    import os

    (alice.root / "outside").mkdir()
    os.symlink(alice.root / "outside", alice.repo / "out")
    through = PATCH.replace("added.txt", "out/planted.txt")
    r = alice.post("/api/vcs/patch", params=params(alice), json={"patch": through})
    assert r.status_code in (400, 403), r.text
    assert not (alice.root / "outside" / "planted.txt").exists()


def test_patch_paths_are_relative_to_a_subdirectory_context(alice):
    populate(alice.repo)
    sub = {"directory": str(alice.repo / "src")}
    patch = "--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n-VALUE = 42\n+VALUE = 43\n"
    r = alice.post("/api/vcs/patch", params=sub, json={"patch": patch})
    assert r.status_code == 200, r.text
    assert (alice.repo / "src" / "util.py").read_text() == "VALUE = 43\n"
    escape = "--- a/../README.md\n+++ b/../README.md\n@@ -1 +1 @@\n-hello\n+bye\n"
    assert alice.post("/api/vcs/patch", params=sub, json={"patch": escape}).status_code == 403
    assert (alice.repo / "README.md").read_text() == "hello\n"


def test_patch_publishes_file_edited_for_each_file(alice):
    from tests.runner.sse import EventRecorder

    recorder = EventRecorder(alice, alice.repo)
    try:
        assert alice.post("/api/vcs/patch", params=params(alice), json={"patch": PATCH}).status_code == 200
        for name in ("README.md", "added.txt"):
            recorder.wait_for(lambda e, n=name: e["type"] == "file.edited"
                              and e["properties"] == {"file": str(alice.repo / n)})
    finally:
        recorder.close()


def test_unicode_and_spaced_names_are_reported_verbatim(alice):
    (alice.repo / "café notes.txt").write_text("x\n")
    (alice.repo / "README.md").write_text("changed\n")
    git(alice.repo, "add", "-A")
    status = {c["path"] for c in alice.get("/api/vcs/status", params=params(alice)).json()["data"]}
    assert status == {"café notes.txt", "README.md"}
    diffs = {d["file"] for d in alice.get("/api/vcs/diff", params=params(alice)).json()["data"]}
    assert diffs == {"café notes.txt", "README.md"}


def test_a_quoted_patch_path_is_decoded_before_the_checks(alice):
    quoted = ('diff --git "a/\\056\\056/esc.txt" "b/\\056\\056/esc.txt"\nnew file mode 100644\n--- /dev/null\n'
              '+++ "b/\\056\\056/esc.txt"\n@@ -0,0 +1 @@\n+x\n')
    r = alice.post("/api/vcs/patch", params=params(alice), json={"patch": quoted})
    assert r.status_code == 403, r.text
    assert not (alice.root / "esc.txt").exists()


def test_a_format_query_parameter_is_never_a_server_error(alice):
    for url in ("/path", "/api/vcs/status", "/session", "/file"):
        r = alice.get(url, params=params(alice, format="zzz", path="."))
        assert r.status_code < 500, (url, r.text)
