from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _holds_nul(value) -> bool:
    """Whether a NUL character stands anywhere in a parsed JSON value, keys included."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class LenientJSONParser(JSONParser):
    """Parses every body as JSON whatever its declared type (curl's -d says form-urlencoded).

    Cookie-authenticated requests are held to application/json by JsonOnlySessionAuthentication,
    so a cross-site text/plain form post can never act for a logged-in admin.

    A NUL character anywhere in the body (a free-form `metadata` object, say) is a 400: no database here can
    store it in text or JSON (PostgreSQL refuses \\u0000), so it would otherwise end as a 500."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        if _holds_nul(data):
            raise ParseError("JSON parse error - strings may not contain NUL characters (\\u0000)")
        return data
