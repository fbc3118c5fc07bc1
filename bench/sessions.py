"""Session store benchmark: p50/p99 latency of the hot session routes, and SQL queries per request.

Runs against any server speaking opencode's API (ours, or the reference `opencode serve`, which needs no
auth). It seeds through the API: 1,000 sessions (POST /session) and one session of 500 messages × 5 text
parts (POST /session/{id}/message with noReply: true). On our server `--seed-orm` seeds through the ORM
instead (much faster, same rows), which needs this checkout and the server's DATABASE_URL.

SQL queries per request (ours only, `--queries`): each route is run in this process through Django's test
client on the server's database, inside CaptureQueriesContext, at a small and at the full data size, so the
table shows whether the count grows with rows. The HTTP latencies are measured against the real server.

    python bench/sessions.py --base-url http://127.0.0.1:8000 --token as_xxx --directory ~/code/repo --seed-orm --queries
    python bench/sessions.py --base-url http://127.0.0.1:4096 --directory /tmp/repo          # reference server
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = 1000
MESSAGES = 500
PARTS = 5


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def make_client(args) -> httpx.Client:
    headers = {}
    auth = None
    if args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    elif args.user:
        username, _, password = args.user.partition(":")
        auth = (username, password)
    return httpx.Client(base_url=args.base_url.rstrip("/"), headers=headers, auth=auth, timeout=120)


def timed(client: httpx.Client, method: str, url: str, n: int, **kwargs) -> list[float]:
    client.request(method, url, **kwargs).raise_for_status()  # warm-up
    out = []
    for _ in range(n):
        start = time.perf_counter()
        response = client.request(method, url, **kwargs)
        out.append((time.perf_counter() - start) * 1000)
        response.raise_for_status()
    return out


# ---- seeding --------------------------------------------------------------------------------------

def seed_api(client: httpx.Client, directory: str, model: str | None = None) -> tuple[str, str]:
    params = {"directory": directory}
    existing = len(client.get("/session", params={**params, "limit": 100000}).json())
    for n in range(max(0, SESSIONS - existing - 2)):
        client.post("/session", params=params, json={"title": f"bench session {n}"}).raise_for_status()
    small = client.post("/session", params=params, json={"title": "bench small"}).json()["id"]
    big = client.post("/session", params=params, json={"title": "bench 500x5"}).json()["id"]
    def prompt(sid: str, n: int) -> dict:
        body = {"noReply": True, "parts": [{"type": "text", "text": f"message {n} part {p} " * 8} for p in range(PARTS)]}
        if model:
            provider_id, _, model_id = model.partition("/")
            body["model"] = {"providerID": provider_id, "modelID": model_id}
        return body

    response = client.post(f"/session/{small}/message", params=params, json=prompt(small, 0))
    if response.status_code >= 400:
        sys.exit(f"POST /session/{{id}}/message (noReply) answered {response.status_code}; "
                 "use --seed-orm on our server")
    for n in range(MESSAGES):
        client.post(f"/session/{big}/message", params=params, json=prompt(big, n)).raise_for_status()
    return small, big


def django_setup() -> None:
    # This script's folder holds other benchmarks (bench/pty.py would shadow the stdlib's pty module).
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.settings")
    import django

    django.setup()


def seed_orm(client: httpx.Client, directory: str, model: str | None = None) -> tuple[str, str]:
    """Same rows as seed_api, written in bulk: sessions through the create route's own context, messages
    and parts straight into the tables."""
    django_setup()
    from agentserver import ids
    from projects_app.models import now_ms
    from sessions_app.models import Message, Part, Session

    template = client.post("/session", params={"directory": directory}, json={"title": "bench template"}).json()
    owner_id = Session.objects.get(id=template["id"]).owner_id
    existing = Session.objects.filter(owner_id=owner_id, project_id=template["projectID"]).count()
    now = now_ms()
    fields = dict(owner_id=owner_id, project_id=template["projectID"], directory=template["directory"],
                  path=template["path"], version=template["version"], slug="bench-seed")
    Session.objects.bulk_create([
        Session(id=ids.descending("ses"), title=f"bench session {n}", time_created=now - n, time_updated=now - n,
                **fields) for n in range(max(0, SESSIONS - existing - 1))
    ], batch_size=500)
    small = Session.objects.create(id=ids.descending("ses"), title="bench small", **fields)
    big = Session.objects.create(id=ids.descending("ses"), title="bench 500x5", **fields)
    for session, count in ((small, 1), (big, MESSAGES)):
        messages, parts = [], []
        for n in range(count):
            mid = ids.ascending("msg")
            info = {"id": mid, "sessionID": session.id, "role": "user", "time": {"created": now_ms()},
                    "agent": "build", "model": {"providerID": "bench", "modelID": "bench"}}
            messages.append(Message(id=mid, session=session, role="user", info=info))
            for p in range(PARTS):
                pid = ids.ascending("prt")
                parts.append(Part(id=pid, message_id=mid, session=session, type="text", data={
                    "id": pid, "sessionID": session.id, "messageID": mid, "type": "text",
                    "text": f"message {n} part {p} " * 8}))
        Message.objects.bulk_create(messages, batch_size=500)
        Part.objects.bulk_create(parts, batch_size=1000)
    return small.id, big.id


# ---- SQL queries per request (in process) -----------------------------------------------------------

def count_queries(args, small: str, big: str) -> list[tuple[str, int, int]]:
    django_setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {args.token}")
    params = {"directory": args.directory}

    def queries(method: str, url: str, data=None, query: dict | None = None) -> int:
        with CaptureQueriesContext(connection) as captured:
            if method == "GET":
                response = client.get(url, {**params, **(query or {})})
            else:
                from urllib.parse import urlencode

                response = client.post(f"{url}?{urlencode(params)}", data=data or {}, content_type="application/json")
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
        return len(captured.captured_queries)

    return [
        ("GET /session  (limit 10 vs 1000 of 1,000)", queries("GET", "/session", query={"limit": 10}),
         queries("GET", "/session", query={"limit": 1000})),
        ("GET /session/{id}/message  (1×5 vs 500×5)", queries("GET", f"/session/{small}/message"),
         queries("GET", f"/session/{big}/message")),
        ("GET /session/{id}/message?limit=100", queries("GET", f"/session/{small}/message", query={"limit": 100}),
         queries("GET", f"/session/{big}/message", query={"limit": 100})),
        ("POST /session  (first vs with 1,000)", queries("POST", "/session", {"title": "q"}),
         queries("POST", "/session", {"title": "q"})),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", help="API token (Bearer)")
    parser.add_argument("--user", help="user:password (HTTP Basic)")
    parser.add_argument("--directory", required=True, help="directory (project) the sessions live in")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per route")
    parser.add_argument("--seed-orm", action="store_true", help="seed our server through the ORM")
    parser.add_argument("--model", help="provider/model named in the noReply seeding prompts (none is called)")
    parser.add_argument("--queries", action="store_true", help="count SQL queries per request (ours, in process)")
    args = parser.parse_args()
    args.directory = os.path.realpath(os.path.expanduser(args.directory))

    client = make_client(args)
    started = time.perf_counter()
    small, big = (seed_orm if args.seed_orm else seed_api)(client, args.directory, args.model)
    seeded = time.perf_counter() - started
    params = {"directory": args.directory}
    total = len(client.get("/session", params={**params, "limit": 100000}).json())
    big_count = len(client.get(f"/session/{big}/message").json())

    rows = []
    for label, method, url, kwargs in [
        ("GET /session (default limit)", "GET", "/session", {"params": params}),
        (f"GET /session?limit={SESSIONS}", "GET", "/session", {"params": {**params, "limit": SESSIONS}}),
        (f"GET /session/{{id}}/message ({MESSAGES}×{PARTS})", "GET", f"/session/{big}/message", {}),
        ("GET /session/{id}/message?limit=100", "GET", f"/session/{big}/message", {"params": {"limit": 100}}),
        ("POST /session", "POST", "/session", {"params": params, "json": {"title": "bench"}}),
    ]:
        values = timed(client, method, url, args.requests, **kwargs)
        rows.append((label, statistics.median(values), percentile(values, 99)))

    print(f"\nserver {args.base_url}  sessions in project: {'≥' if total >= SESSIONS else ''}{total}  big session: {big_count} messages × {PARTS} parts"
          f"  (seeded in {seeded:.1f}s, {args.requests} requests per route, keep-alive)\n")
    print(f"| {'route':<42} | {'p50 ms':>7} | {'p99 ms':>7} |")
    print(f"|{'-' * 44}|{'-' * 9}|{'-' * 9}|")
    for label, p50, p99 in rows:
        print(f"| {label:<42} | {p50:7.1f} | {p99:7.1f} |")
    if args.queries:
        print(f"\n| {'SQL queries per request':<44} | {'small':>6} | {'large':>6} |")
        print(f"|{'-' * 46}|{'-' * 8}|{'-' * 8}|")
        for label, small_count, large_count in count_queries(args, small, big):
            print(f"| {label:<44} | {small_count:6d} | {large_count:6d} |")


if __name__ == "__main__":
    main()
