"""The HTTP entry point: Django's ASGI handler, serving each request in one hop onto a fixed pool of threads.

Django's stock handler gives every request a thread of its own (a new executor per request) and hops between
the event loop and that thread three times (request_started, the middleware chain, response.close). A new
thread also means a new database connection, since Django's connections are per thread. Here the signals,
the synchronous middleware chain and the view run in one call on a long-lived pool thread, which keeps its
connection between requests (CONN_MAX_AGE), and requests still run side by side (one thread each).

Admission (agentserver/http/admission.py): at most `running` requests do Python work at once, the others wait in
a queue that the threads holding the slots take them from. One process runs Python one thread at a time (the
GIL), so more threads only add switching: at 32 concurrent clients on 32 threads a GET /session cost three
times the CPU it costs alone, most of it the event loop thread waiting to get the GIL back from the request
threads. A request that holds its slot for longer than SLOW_AFTER seconds gives it up and goes on running
on its thread, so slow requests never starve quick ones.

Two middleware chains: the JSON API, called with tokens, runs settings.API_MIDDLEWARE (CORS, body size,
security headers); the admin, its static files, the public share pages and any request that carries the
admin's session cookie (the API accepts it, with CSRF) run the full settings.MIDDLEWARE. Sessions, CSRF,
messages and the rest cost an eighth of a token-authenticated GET /session and do nothing for it.

A view that answers from memory (`answers_from_memory = True`: no database, no waiting, a fraction of a
millisecond, such as GET /global/health) is served on the event loop itself when its exact path is asked for
with a safe method: no queue for a turn and no hand-over to a pool thread and back. During an agent batch
(32 runners) the pool threads wait for the GIL and for their turn, and a health check that went through
them took up to 0.3 s for 0.6 ms of work.

Async views (the event streams) work as under the stock handler with a synchronous middleware: the chain
calls them through async_to_sync, so they run on the event loop and return their streaming response, which
is then sent from the loop, cancelled when the client disconnects. When every pool thread is busy (say, many
`session.prompt` calls waiting for their answers) a request falls back to the stock path rather than queueing
behind them."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.core.handlers.exception import convert_exception_to_response
from django.http import FileResponse, HttpResponseBase
from django.urls import (
    Resolver404,
    URLResolver,
    get_resolver,
    resolve,
    set_script_prefix,
)
from django.urls.resolvers import RoutePattern
from django.utils.module_loading import import_string

from agentserver.db import read_once
from agentserver.http.admission import Lanes
from agentserver.workers.loop import adopt_loop, request_turn, run_on


def request_started_receivers() -> tuple[list, list]:
    """(sync, async) receivers of request_started. Signal.send() from a thread would run the async ones
    (the runner's start hook) through async_to_sync, a round trip to the loop on every request: here they
    are awaited on the loop and the sync ones called in the pool thread, as Signal.asend() splits them."""
    return signals.request_started._live_receivers(ASGIHandler)


SLOW_AFTER = 0.05
# Requests of these methods queue apart from the others for their turn (agentserver/http/admission.py).
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _literal_paths(patterns, prefix: str = "/"):
    for entry in patterns:
        if not isinstance(entry.pattern, RoutePattern) or entry.pattern.converters:
            continue
        if isinstance(entry, URLResolver):
            yield from _literal_paths(entry.url_patterns, prefix + str(entry.pattern))
        else:
            yield prefix + str(entry.pattern)


def _answers_from_memory(path: str) -> bool:
    try:
        view = resolve(path).func
    except Resolver404:
        return False
    return getattr(getattr(view, "view_class", None), "answers_from_memory", False)


def paths_answered_from_memory() -> frozenset[str]:
    """The exact paths whose view (the one Django resolves them to) answers from memory."""
    return frozenset(path for path in _literal_paths(get_resolver().url_patterns) if _answers_from_memory(path))


class ApiHandler(BaseHandler):
    """Django's synchronous handler over settings.API_MIDDLEWARE instead of settings.MIDDLEWARE."""

    def load_middleware(self, is_async=False):
        self._view_middleware, self._template_response_middleware, self._exception_middleware = [], [], []
        chain = convert_exception_to_response(self._get_response)
        for path in reversed(settings.API_MIDDLEWARE):
            middleware = import_string(path)(chain)
            if hasattr(middleware, "process_view"):
                self._view_middleware.insert(0, middleware.process_view)
            if hasattr(middleware, "process_template_response"):
                self._template_response_middleware.append(middleware.process_template_response)
            if hasattr(middleware, "process_exception"):
                self._exception_middleware.append(middleware.process_exception)
            chain = convert_exception_to_response(middleware)
        self._middleware_chain = chain


# The browser pages (web_app) need sessions, CSRF and messages even before the session cookie exists.
_FULL_CHAIN_PREFIXES = ("/admin/", "/static/", "/share/", "/signin", "/signout", "/account", "/oidc/")


def wants_full_chain(scope) -> bool:
    """The admin, its static files, the share pages, and requests carrying the admin's session cookie."""
    if scope["path"].startswith(_FULL_CHAIN_PREFIXES) or scope["path"] == "/admin":
        return True
    cookie = settings.SESSION_COOKIE_NAME.encode() + b"="
    return any(name == b"cookie" and cookie in value for name, value in scope["headers"])


class PooledASGIHandler(ASGIHandler):
    def __init__(self, threads: int, running: int):
        super().__init__()
        self._sync_handler = BaseHandler()
        self._sync_handler.load_middleware(is_async=False)
        self._api_handler = ApiHandler()
        self._api_handler.load_middleware(is_async=False)
        self._threads = threads
        self._busy = 0
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="http")
        self._lanes = Lanes(self._pool, running=running, slow_after=SLOW_AFTER)
        self._from_memory = paths_answered_from_memory()

    async def _in_pool(self, function, *args):
        """Run `function(*args)` on a pool thread in a copy of the caller's context (agentserver/workers/loop.py)."""
        return await run_on(self._pool, function, *args)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self._busy >= self._threads:
            return await super().__call__(scope, receive, send)
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        sync_receivers, async_receivers = request_started_receivers()
        for receiver in async_receivers:
            await receiver(signal=signals.request_started, sender=ASGIHandler, scope=scope)
        if scope["path"] in self._from_memory and scope["method"] in _SAFE_METHODS:
            response = self._respond(scope, body_file, sync_receivers)
            try:
                await self.send_response(response, send)
            finally:
                body_file.close()
            return
        self._busy += 1
        try:
            response = await self._lanes.run(self._serve, asyncio.get_running_loop(), scope, body_file,
                                             sync_receivers, reads_only=scope["method"] in _SAFE_METHODS)
        finally:
            self._busy -= 1
        try:
            if response.streaming:
                await self._send_streaming(response, receive, send)
                await self._in_pool(self._close, response)
            else:
                await self.send_response(response, send)
        finally:
            body_file.close()

    def _serve(self, loop, scope, body_file, started_receivers, give_up_turn) -> HttpResponseBase:
        """Everything synchronous about one request, on a pool thread; a complete (non-streaming) response is
        closed here too, so request_finished runs on the thread that owns the request's database connection."""
        adopt_loop(loop)
        with request_turn(give_up_turn), read_once.unit():
            return self._respond(scope, body_file, started_receivers)

    def _respond(self, scope, body_file, started_receivers) -> HttpResponseBase:
        set_script_prefix(get_script_prefix(scope))
        for receiver in started_receivers:
            receiver(signal=signals.request_started, sender=ASGIHandler, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            response = error_response
        else:
            handler = self._sync_handler if wants_full_chain(scope) else self._api_handler
            response = handler.get_response(request)
            response._handler_class = ASGIHandler
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
        if not response.streaming:
            response.close()
        return response

    @staticmethod
    def _close(response: HttpResponseBase) -> None:
        response.close()

    async def _send_streaming(self, response, receive, send) -> None:
        """Send a streaming response until it ends or the client goes away (then the stream is cancelled)."""
        sending = asyncio.create_task(self.send_response(response, send))
        watching = asyncio.create_task(self.listen_for_disconnect(receive))
        await asyncio.wait([sending, watching], return_when=asyncio.FIRST_COMPLETED)
        for task in (watching, sending):
            if not task.done():
                task.cancel()
            try:
                await task
            except (asyncio.CancelledError, RequestAborted):
                pass
