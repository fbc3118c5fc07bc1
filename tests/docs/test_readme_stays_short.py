"""The README is the operator's manual (set-up, sign-in, configuration, deployment, security, operations) in
at most 400 lines; history and rationale go to docs/ (benchmarks.md, design-notes.md, …), linked from it."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
MOST_LINES = 400


def test_the_readme_stays_within_400_lines():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= MOST_LINES, (
        f"README.md has {len(lines)} lines, at most {MOST_LINES}: move history or rationale to docs/ and link it")

