"""Views that answer from memory (GET /global/health) are served on the event loop: they answer while every
turn to run a request is taken (agentserver/http/handler.py). The real ASGI handler, called as uvicorn calls it."""
import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor

from agentserver.http.handler import PooledASGIHandler, paths_answered_from_memory

LONG = 10.0


def scope_of(method: str, path: str) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
            "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
            "headers": [(b"host", b"testserver")], "client": ("127.0.0.1", 1), "server": ("testserver", 80)}


async def call(handler, method: str, path: str) -> tuple[int, bytes]:
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await handler(scope_of(method, path), receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_only_the_health_routes_answer_from_memory():
    assert paths_answered_from_memory() == {"/global/health", "/api/health"}


def test_health_answers_while_every_pool_thread_is_taken():
    handler = PooledASGIHandler(threads=2, running=1)
    hold = threading.Event()

    async def main():
        # Every thread of the pool busy (requests waiting for answers, say): a request queued for a thread
        # would wait until one is free.
        held = [asyncio.wrap_future(handler._pool.submit(hold.wait, LONG)) for _ in range(2)]
        try:
            status, body = await asyncio.wait_for(call(handler, "GET", "/global/health"), LONG / 2)
            assert not any(future.done() for future in held)
            v2_status, v2_body = await asyncio.wait_for(call(handler, "GET", "/api/health"), LONG)
        finally:
            hold.set()
        await asyncio.wait_for(asyncio.gather(*held), LONG)
        return status, json.loads(body), v2_status, json.loads(v2_body)

    # On a thread of its own, as the server's loop is: one that never opened a database connection (the test
    # process's main thread may hold one from an earlier test, which the request signals would then check).
    with ThreadPoolExecutor(1) as loop_thread:
        status, body, v2_status, v2_body = loop_thread.submit(asyncio.run, main()).result()
    assert status == 200 and body["healthy"] is True and isinstance(body["version"], str)
    assert v2_status == 200 and v2_body == {"healthy": True}
