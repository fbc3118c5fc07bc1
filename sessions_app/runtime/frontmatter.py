"""Markdown front matter of command, skill and agent files."""


def parse_frontmatter(text: str) -> tuple[dict, str]:
    """`---` delimited `key: value` lines (YAML-ish: scalars, quotes stripped, true/false) and the body."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    meta: dict = {}
    for line in text[3:end].splitlines():
        key, sep, value = line.partition(":")
        if not sep or not key.strip() or line[:1].isspace():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif value.lower() in ("true", "false"):
            value = value.lower() == "true"
        meta[key.strip()] = value
    body = text[end + 4:]
    return meta, body[1:] if body.startswith("\n") else body
