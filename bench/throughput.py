"""Request throughput: requests/s and latency p50/p99 at 1, 8 and 32 concurrent clients for the hot read and
write routes, on keep-alive connections and on a fresh connection per request.

    python bench/throughput.py http://127.0.0.1:4096 --user admin --token as_xxx
    python bench/throughput.py http://127.0.0.1:14096                  # opencode serve (no auth)

Routes: `GET /session` (the project's 10 seeded sessions), `GET /session/{id}/message` on a session of 20 and
one of 500 messages, `POST /session` (into --write-directory when given, so created sessions do not grow the
listed project) and `GET /file/status`. The script seeds its own data through the API (sessions, and
messages stored with `noReply: true`, which needs no model call) and works against any server speaking
opencode's API, so it times opencode too.

The load generator is `wrk` (C, epoll; `apt-get install wrk`), so the client is not the bottleneck on a 2-core
machine: a Python client at 32 connections eats a core by itself. "Fresh" runs send `Connection: close`, so
wrk opens a new TCP connection per request (its latency clock starts once connected: on loopback the
handshake is tens of microseconds). Each run lasts --seconds (2 by default); loopback only.

--json FILE writes every figure as {"route | mode | clients": {"rps", "p50_ms", "p99_ms", "errors"}};
`throughput.py compare NAME_A NAME_B a*.json -- b*.json` prints the ratio table (medians) of such runs;
with `--machine MODE` first, also how many of the machine's cores were busy during that mode's figures.
--spread-to URL divides the clients among several workers of one server (the scaled mode).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

SEED_SESSIONS = 10
MESSAGE_SIZES = (20, 500)
# A stored note names a model but never calls it; any catalog model will do, no credentials needed.
SEED_MODEL = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
ROUTES = ("GET /session", "GET messages 20", "GET messages 500", "POST /session", "GET /file/status")


class Client:
    def __init__(self, base_url: str, headers: dict[str, str]):
        self.base_url = base_url.rstrip("/")
        self.headers = headers

    def call(self, method: str, path: str, body: dict | None = None, query: dict | None = None):
        url = self.base_url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers={
            **self.headers, **({"Content-Type": "application/json"} if data is not None else {})})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read() or b"null")


def seed(client: Client, directory: str | None) -> dict[str, str]:
    """10 sessions in the project; the first holds 20 messages, the second 500. Reuses an earlier seed (the
    titles mark it) so repeated runs against one server measure the same data."""
    query = {"directory": directory} if directory else None
    existing = [s for s in client.call("GET", "/session", query=query) if s.get("title", "").startswith("bench-")]
    by_title = {s["title"]: s["id"] for s in existing}
    for index in range(SEED_SESSIONS):
        title = f"bench-{index}"
        if title not in by_title:
            by_title[title] = client.call("POST", "/session", {"title": title}, query=query)["id"]
    ids = {}
    for index, size in enumerate(MESSAGE_SIZES):
        session_id = by_title[f"bench-{index}"]
        have = len(client.call("GET", f"/session/{session_id}/message"))
        for n in range(have, size):
            client.call("POST", f"/session/{session_id}/message",
                        {"noReply": True, "model": SEED_MODEL, "parts": [{"type": "text", "text": f"note {n}: " + "lorem ipsum " * 8}]})
        ids[size] = session_id
    return {f"GET messages {size}": f"/session/{ids[size]}/message" for size in MESSAGE_SIZES}


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(number) * _UNITS[unit]


def wrk(url: str, headers: dict[str, str], *, clients: int, seconds: float, method: str = "GET",
        body: str | None = None, fresh: bool = False) -> dict:
    script = None
    args = ["wrk", "-t", str(min(2, clients)), "-c", str(clients), "-d", f"{max(1, round(seconds))}s", "--latency",
            "--timeout", "10s"]
    for name, value in {**headers, **({"Connection": "close"} if fresh else {})}.items():
        args += ["-H", f"{name}: {value}"]
    if method != "GET":
        script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
        script.write(f"wrk.method = {json.dumps(method)}\nwrk.body = {json.dumps(body or '')}\n"
                     'wrk.headers["Content-Type"] = "application/json"\n')
        script.close()
        args += ["-s", script.name]
    try:
        out = subprocess.run(args + [url], capture_output=True, text=True, timeout=seconds + 30).stdout
    finally:
        if script:
            os.unlink(script.name)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"\s50%\s+(\S+)", out)
    p99 = re.search(r"\s99%\s+(\S+)", out)
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    failed = int(errors.group(1)) if errors else 0
    if socket_errors:
        # A server that closes after each response shows up as read errors on fresh runs: count only the rest.
        connect, read, write, timeout = map(int, socket_errors.groups())
        failed += connect + write + timeout + (0 if fresh else read)
    if not rps or not p50:
        return {"rps": 0.0, "p50_ms": None, "p99_ms": None, "errors": -1, "raw": out[-500:]}
    return {"rps": float(rps.group(1)), "p50_ms": _ms(p50.group(1)), "p99_ms": _ms(p99.group(1)),
            "errors": failed}


def _machine_jiffies() -> tuple[int, int] | None:
    """(busy, all) CPU time of the whole machine so far, in clock ticks summed over its cores (Linux)."""
    try:
        with open("/proc/stat") as stat:
            user, nice, system, idle, iowait, irq, softirq, steal = map(int, stat.readline().split()[1:9])
    except (OSError, ValueError):
        return None
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


def wrk_spread(urls: list[str], headers: dict[str, str], *, clients: int, seconds: float, **kwargs) -> dict:
    """The clients divided among several workers of one server (as a balancer would): one wrk per worker,
    all at once; requests/s add up, latencies are the slowest worker's. Also how much of the machine was busy
    meanwhile (`cores_busy`: the server, its database and the load generator together)."""
    before = _machine_jiffies()
    share = max(1, clients // len(urls))
    with ThreadPoolExecutor(len(urls)) as pool:
        figures = list(pool.map(lambda url: wrk(url, headers, clients=share, seconds=seconds, **kwargs), urls))
    after = _machine_jiffies()
    if any(f["p50_ms"] is None for f in figures):
        return next(f for f in figures if f["p50_ms"] is None)
    result = {"rps": sum(f["rps"] for f in figures), "p50_ms": max(f["p50_ms"] for f in figures),
              "p99_ms": max(f["p99_ms"] for f in figures), "errors": sum(f["errors"] for f in figures)}
    if before and after and after[1] > before[1]:
        result["cores_busy"] = (after[0] - before[0]) / (after[1] - before[1]) * os.cpu_count()
    return result


def run(base_url: str, headers: dict[str, str], *, directory: str | None, write_directory: str | None,
        clients: list[int], seconds: float, routes: list[str], spread_to: list[str] = ()) -> dict:
    client = Client(base_url, headers)
    message_paths = seed(client, directory)
    list_query = "?" + urllib.parse.urlencode({"directory": directory}) if directory else ""
    write_query = "?" + urllib.parse.urlencode({"directory": write_directory or directory}) \
        if (write_directory or directory) else ""
    targets = {
        "GET /session": ("GET", "/session" + list_query),
        **{name: ("GET", path) for name, path in message_paths.items()},
        "POST /session": ("POST", "/session" + write_query),
        "GET /file/status": ("GET", "/file/status" + list_query),
    }
    results = {}
    for route in routes:
        method, path = targets[route]
        for mode in ("keep-alive", "fresh"):
            for count in clients:
                urls = [url.rstrip("/") + path for url in [base_url, *spread_to]]
                results[f"{route} | {mode} | {count}"] = wrk_spread(
                    urls, headers, clients=count, seconds=seconds, method=method,
                    body="{}" if method == "POST" else None, fresh=mode == "fresh")
    return results


def _median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def compare(ours: list[str], theirs: list[str], *, names: tuple[str, str], machine: tuple[str, ...] = ()) -> None:
    """The ratio table from several --json runs of two servers: medians of each figure, ours / theirs
    (req/s: higher is better; p50: lower is better). `machine`: modes whose machine CPU to show as well."""
    load = lambda files: [json.load(open(f)) for f in files]  # noqa: E731
    a, b = load(ours), load(theirs)
    print(f"medians of {len(a)} / {len(b)} runs; ratio = {names[0]} / {names[1]}")
    print(f"{'route':<18} {'mode':<10} {'c':>3} | {'req/s ' + names[0]:>14} {names[1]:>10} {'ratio':>6} | "
          f"{'p50 ms ' + names[0]:>15} {names[1]:>10} {'ratio':>6}")
    for key in a[0]:
        route, mode, count = key.split(" | ")
        rps_a, rps_b = _median([r[key]["rps"] for r in a]), _median([r[key]["rps"] for r in b if key in r])
        p50_a, p50_b = _median([r[key]["p50_ms"] for r in a]), _median([r[key]["p50_ms"] for r in b if key in r])
        ratio = lambda x, y: f"{x / y:6.2f}" if x is not None and y else "     -"  # noqa: E731
        fmt = lambda x, spec: format(x, spec) if x is not None else "-"  # noqa: E731
        print(f"{route:<18} {mode:<10} {count:>3} | {fmt(rps_a, '14.1f')} {fmt(rps_b, '10.1f')} {ratio(rps_a, rps_b)} | "
              f"{fmt(p50_a, '15.2f')} {fmt(p50_b, '10.2f')} {ratio(p50_a, p50_b)}")
    if machine:
        _machine_table(a, b, names=names, keys=[k for k in a[0] if k.split(" | ")[1] in machine])


def _machine_table(a: list[dict], b: list[dict], *, names: tuple[str, str], keys: list[str]) -> None:
    """Cores busy on the whole machine during each figure (server, database, load generator: everything on
    it), and that CPU time per request: when two workers keep the machine busy, the machine is the limit."""
    print(f"machine CPU, medians ({os.cpu_count()} cores; server, database and load generator together)")
    print(f"{'route':<18} {'mode':<10} {'c':>3} | {'cores busy ' + names[0]:>22} {names[1]:>10} | "
          f"{'CPU ms/request ' + names[0]:>26} {names[1]:>10}")
    for key in keys:
        route, mode, count = key.split(" | ")
        cores = [_median([r[key].get("cores_busy") for r in runs if key in r]) for runs in (a, b)]
        per_request = [_median([r[key]["cores_busy"] * 1000 / r[key]["rps"] for r in runs
                                if key in r and r[key].get("cores_busy") and r[key]["rps"]]) for runs in (a, b)]
        fmt = lambda x, spec: format(x, spec) if x is not None else "-"  # noqa: E731
        print(f"{route:<18} {mode:<10} {count:>3} | {fmt(cores[0], '22.2f')} {fmt(cores[1], '10.2f')} | "
              f"{fmt(per_request[0], '26.2f')} {fmt(per_request[1], '10.2f')}")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "compare":
        # bench/throughput.py compare [--machine MODE] NAME_A NAME_B a1.json a2.json ... -- b1.json b2.json ...
        argv = sys.argv[2:]
        machine = ()
        if argv[0] == "--machine":
            machine, argv = (argv[1],), argv[2:]
        split = argv.index("--")
        compare(argv[2:split], argv[split + 1:], names=(argv[0], argv[1]), machine=machine)
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base_url")
    parser.add_argument("--user", help="username for HTTP Basic (with --token); Bearer when only --token")
    parser.add_argument("--token")
    parser.add_argument("--directory", help="project directory for the listed sessions (default: server's)")
    parser.add_argument("--write-directory", help="directory POST /session creates into")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--seconds", type=int, default=2)
    parser.add_argument("--routes", default=",".join(ROUTES), help="comma-separated subset of: " + ", ".join(ROUTES))
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--spread-to", action="append", default=[], metavar="URL",
                        help="another worker of the same server: the clients are divided among all of them")
    args = parser.parse_args()
    if not args.base_url.startswith(("http://127.", "http://localhost", "http://[::1]")):
        parser.error("loopback only")
    if shutil.which("wrk") is None:
        parser.error("needs wrk (apt-get install wrk)")
    headers = {}
    if args.token and args.user:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{args.user}:{args.token}".encode()).decode()
    elif args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    results = run(args.base_url, headers, directory=args.directory, write_directory=args.write_directory,
                  clients=[int(c) for c in args.clients.split(",")], seconds=args.seconds, routes=routes,
                  spread_to=args.spread_to)
    print(f"{'route':<20} {'mode':<10} {'clients':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}")
    for key, figure in results.items():
        route, mode, count = key.split(" | ")
        p50 = f"{figure['p50_ms']:.2f}" if figure["p50_ms"] is not None else "-"
        p99 = f"{figure['p99_ms']:.2f}" if figure["p99_ms"] is not None else "-"
        print(f"{route:<20} {mode:<10} {count:>7} {figure['rps']:>9.1f} {p50:>8} {p99:>8} {figure['errors']:>6}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
