"""One TLS context for every provider client. Building one loads the CA bundle: 60–240 ms of CPU on the
event loop for every model call (the SDK clients build their own per instance), during which no SSE stream
is served. SSLContext is safe to share between connections and threads."""
from __future__ import annotations

import functools
import ssl

import httpx2


@functools.cache
def ssl_context() -> ssl.SSLContext:
    return httpx2.create_ssl_context()


def http_client(sdk, timeout: float):
    """The SDK's default async httpx client (its limits, redirects), with the shared TLS context."""
    return sdk.DefaultAsyncHttpxClient(verify=ssl_context(), timeout=timeout)
