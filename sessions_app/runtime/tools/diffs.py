"""Unified diffs in the shape opencode puts in edit/write permission metadata and results."""
from __future__ import annotations

import difflib


def unified(path: str, before: str, after: str) -> str:
    body = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=path, tofile=path))
    lines = []
    for line in body.splitlines(keepends=True):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return f"Index: {path}\n{'=' * 67}\n" + "".join(lines)


def counts(before: str, after: str) -> tuple[int, int]:
    additions = deletions = 0
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            deletions += i2 - i1
        if tag in ("replace", "insert"):
            additions += j2 - j1
    return additions, deletions


def filediff(path: str, before: str, after: str) -> dict:
    additions, deletions = counts(before, after)
    return {"file": path, "before": before, "after": after, "additions": additions, "deletions": deletions}
