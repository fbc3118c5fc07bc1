from rest_framework.parsers import JSONParser


class LenientJSONParser(JSONParser):
    """Parses every body as JSON whatever its declared type (curl's -d says form-urlencoded).

    Cookie-authenticated requests are held to application/json by JsonOnlySessionAuthentication,
    so a cross-site text/plain form post can never act for a logged-in admin."""

    media_type = "*/*"
