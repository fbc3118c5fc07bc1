# The web tests' browser fixtures: an HTTP client that keeps cookies, and a real chromium.
from tests.web.conftest import alice_cookies, browser_client, chromium  # noqa: F401
