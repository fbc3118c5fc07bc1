"""Every document and picture the README links (docs/*.md, the screenshots) exists: moving a document out of
the README must not leave a dead link behind."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_every_document_the_readme_links_exists():
    text = (ROOT / "README.md").read_text()
    linked = {part.split(")")[0] for part in text.split("](")[1:]}
    local = sorted(link for link in linked if not link.startswith(("http://", "https://", "#")))
    assert local, "the README links no document"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README.md links documents that do not exist: {missing}"
