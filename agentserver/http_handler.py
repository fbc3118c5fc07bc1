"""The HTTP entry point: Django's ASGI handler, serving each request in one hop onto a fixed pool of threads.

Django's stock handler gives every request a thread of its own (a new executor per request) and hops between
the event loop and that thread three times (request_started, the middleware chain, response.close). A new
thread also means a new database connection, since Django's connections are per thread. Here the signals,
the synchronous middleware chain and the view run in one call on a long-lived pool thread, which keeps its
connection between requests (CONN_MAX_AGE), and requests still run side by side (one thread each).

Async views (the event streams) work as under the stock handler with a synchronous middleware: the chain
calls them through async_to_sync, so they run on the event loop and return their streaming response, which
is then sent from the loop, cancelled when the client disconnects. When every pool thread is busy (say, many
`session.prompt` calls waiting for their answers) a request falls back to the stock path rather than queueing
behind them."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.http import FileResponse, HttpResponseBase
from django.urls import set_script_prefix


def request_started_receivers() -> tuple[list, list]:
    """(sync, async) receivers of request_started. Signal.send() from a thread would run the async ones
    (the runner's start hook) through async_to_sync, a round trip to the loop on every request: here they
    are awaited on the loop and the sync ones called in the pool thread, as Signal.asend() splits them."""
    return signals.request_started._live_receivers(ASGIHandler)


class PooledASGIHandler(ASGIHandler):
    def __init__(self, threads: int):
        super().__init__()
        self._sync_handler = BaseHandler()
        self._sync_handler.load_middleware(is_async=False)
        self._threads = threads
        self._busy = 0
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="http")
        self._serve_in_pool = sync_to_async(self._serve, thread_sensitive=False, executor=self._pool)
        self._close_in_pool = sync_to_async(self._close, thread_sensitive=False, executor=self._pool)

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
        self._busy += 1
        try:
            response = await self._serve_in_pool(scope, body_file, sync_receivers)
        finally:
            self._busy -= 1
        try:
            if response.streaming:
                await self._send_streaming(response, receive, send)
                await self._close_in_pool(response)
            else:
                await self.send_response(response, send)
        finally:
            body_file.close()

    def _serve(self, scope, body_file, started_receivers) -> HttpResponseBase:
        """Everything synchronous about one request; a complete (non-streaming) response is closed here too,
        so request_finished runs on the thread that owns the request's database connection."""
        set_script_prefix(get_script_prefix(scope))
        for receiver in started_receivers:
            receiver(signal=signals.request_started, sender=ASGIHandler, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            response = error_response
        else:
            response = self._sync_handler.get_response(request)
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
