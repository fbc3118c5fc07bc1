"""A small HTML → text / markdown conversion (scripts, styles and head dropped; headings, links, lists kept)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "iframe", "object", "embed", "head", "template", "svg"}
_BLOCK = {"p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "table", "tr", "ul",
          "ol", "blockquote", "pre", "form", "figure", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "li"}


class _Converter(HTMLParser):
    def __init__(self, markdown: bool):
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self.out: list[str] = []
        self.skip = 0
        self.href: list[str | None] = []

    def handle_starttag(self, tag, attrs):
        if tag in _SKIP:
            self.skip += 1
            return
        if self.skip:
            return
        if tag in _BLOCK:
            self.out.append("\n")
        if not self.markdown:
            return
        if re.fullmatch(r"h[1-6]", tag):
            self.out.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self.out.append("- ")
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag in ("em", "i"):
            self.out.append("_")
        elif tag == "code":
            self.out.append("`")
        elif tag == "a":
            self.href.append(dict(attrs).get("href"))
            self.out.append("[")

    def handle_endtag(self, tag):
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if self.markdown:
            if tag in ("strong", "b"):
                self.out.append("**")
            elif tag in ("em", "i"):
                self.out.append("_")
            elif tag == "code":
                self.out.append("`")
            elif tag == "a":
                href = self.href.pop() if self.href else None
                self.out.append(f"]({href})" if href else "]")
        if tag in _BLOCK:
            self.out.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(re.sub(r"\s+", " ", data))

    def result(self) -> str:
        text = "".join(self.out)
        lines = [line.strip() for line in text.split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def to_text(html: str) -> str:
    converter = _Converter(markdown=False)
    converter.feed(html)
    converter.close()
    return converter.result()


def to_markdown(html: str) -> str:
    converter = _Converter(markdown=True)
    converter.feed(html)
    converter.close()
    return converter.result()
