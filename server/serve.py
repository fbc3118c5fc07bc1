"""The one way a worker is started: `python -m server.serve --host H --port P` (scripts/serve.sh, the
tests' live servers, bench/). uvicorn with httptools and uvloop serves server.asgi:application.

Why uvicorn and not daphne (the stack's first pick): measured on the same data and machine, after the
request path itself was made lean (bench/perf.sh throughput), daphne's Twisted HTTP layer cost about 1 ms
of CPU more per request than uvicorn's httptools protocol (GET /global/health: 1.7 ms against 0.7 ms at 32
clients; GET /session: 4.4 ms against 2.5 ms), which decided whether one process keeps up with opencode.
Every behaviour daphne gave is kept and tested: SSE framing and disconnects, WebSocket PTYs (with real
back-pressure: uvicorn's `send` waits for the network), the exit hooks (through the ASGI lifespan, see
agentserver.workers.shutdown) and SIGHUP/SIGTERM clean-up.

X-Forwarded-For and X-Forwarded-Proto are believed only from settings.TRUSTED_PROXIES
(AGENTSERVER_TRUSTED_PROXIES), not from uvicorn's default, the loopback: anything on the host could forge them."""
from __future__ import annotations

import argparse
import os

import uvicorn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m server.serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4096)
    parser.add_argument("--log-level", default="warning")
    parser.add_argument("--access-log", action="store_true", help="log every request (the tests read it)")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes sharing the port (needs REDIS_URL and a PostgreSQL DATABASE_URL)")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.settings")
    from django.conf import settings

    trusted_proxies = settings.TRUSTED_PROXIES
    shared = os.environ.get("REDIS_URL") and os.environ.get("DATABASE_URL", "").startswith("postgres")
    if args.workers > 1 and not shared:
        parser.error("--workers > 1 needs REDIS_URL and a PostgreSQL DATABASE_URL: workers share events through "
                     "Redis, and the embedded in-memory layer cannot reach another process")
    uvicorn.run(
        "server.asgi:application", host=args.host, port=args.port, loop="uvloop", http="httptools",
        ws="websockets-sansio", lifespan="on", access_log=args.access_log, log_level=args.log_level,
        # Large pastes and file bodies arrive in one frame; the body-size middleware bounds HTTP bodies.
        ws_max_size=64 * 1024 * 1024,
        # A client that stops reading keeps its connection until the OS gives up; give idle keep-alive
        # connections a little longer than uvicorn's 5 s, as clients poll every few seconds.
        timeout_keep_alive=30,
        workers=args.workers,
        proxy_headers=bool(trusted_proxies), forwarded_allow_ips=trusted_proxies or [],
    )


if __name__ == "__main__":
    main()
