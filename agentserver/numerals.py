"""Whole numbers written as text by someone else: a path segment, a header, a URL's query, a remote server's
Content-Length. `str.isdigit()` is not the check: it is true for '²' and '١', which `int()` then refuses
or reads as another number, and a client's digits may not fit a 64-bit column."""
from __future__ import annotations

import re

_DECIMAL = re.compile(r"[0-9]+")


def decimal(text: str | None, *, digits: int = 18) -> int | None:
    """The number `text` writes in ASCII decimal digits, at most `digits` of them (18 fit a signed 64-bit
    column); None for anything else."""
    if not isinstance(text, str) or len(text) > digits or not _DECIMAL.fullmatch(text):
        return None
    return int(text)
