"""One TLS context for every provider client. Building one loads the CA bundle: 60–240 ms of CPU on the
event loop for every model call (the SDK clients build their own per instance), during which no SSE stream
is served. SSLContext is safe to share between connections and threads.

One HTTP client per SDK and timeout on the server loop, too, shared by every model call: a client per call
cost its construction and a new connection (and TLS handshake) per call. The pool holds no credentials:
each request carries its own headers."""
from __future__ import annotations

import asyncio
import functools
import ssl

import httpx2


@functools.cache
def ssl_context() -> ssl.SSLContext:
    return httpx2.create_ssl_context()


_clients: dict[tuple, tuple] = {}  # (sdk, timeout) → (loop, client)


def http_client(sdk, timeout: float):
    """The SDK's default async httpx client (its limits, redirects), with the shared TLS context; the same
    one for every call on this loop. Callers must not close it."""
    loop = asyncio.get_running_loop()
    key = (sdk.__name__, timeout)
    known = _clients.get(key)
    if known is None or known[0] is not loop or known[1].is_closed:
        known = (loop, sdk.DefaultAsyncHttpxClient(verify=ssl_context(), timeout=timeout))
        _clients[key] = known
    return known[1]
