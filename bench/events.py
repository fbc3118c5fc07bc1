"""Event fan-out benchmark: N SSE subscribers on a running server, a publisher at M events/s, and what arrived.

The publisher is `manage.py publish_load` in its own process, on the server's database and REDIS_URL, so
events take the production path: publish() → outbox (log row) → Redis → the server's bus → every stream.
Run it with the same DATABASE_URL and REDIS_URL as the server:

    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/events.py --url http://127.0.0.1:8000 \\
        --user alice --token as_... --server-pid 1234 --subscribers 100 --rate 1000 --seconds 5

Prints delivered % (subscribers × events received within the window), publish→receive latency p50/p99/max
(publisher clock vs subscriber clock, same machine), the server's CPU seconds over the window and the 1-minute
load average. Each configuration runs --repeat times (3 by default): the table shows the median run (by p99),
every run is listed below it. On a loaded machine latency measures the scheduler as much as the server:
compare the load column."""
import argparse
import asyncio
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
TICK = re.compile(rb'"seq":(\d+),"t":([0-9.]+)')


def cpu_seconds(pid: int | None) -> float | None:
    if not pid:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Subscriber:
    """One SSE stream over a raw socket: HTTP/1.1 chunked decoding, then ticks → (seq, latency)."""

    def __init__(self):
        self.latencies: dict[int, float] = {}
        self.connected = asyncio.Event()
        self.closed = False

    async def run(self, host: str, port: int, path: str, token: str) -> None:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
                     f"Accept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"stream refused: {head.decode(errors='replace')}")
        pending = b""
        try:
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.strip().split(b";")[0], 16)
                if size == 0:
                    break
                chunk = await reader.readexactly(size + 2)
                received = time.time()
                pending += chunk[:-2]
                frames, _, pending = pending.rpartition(b"\n\n")
                if b"server.connected" in frames:
                    self.connected.set()
                for seq, sent in TICK.findall(frames):
                    self.latencies.setdefault(int(seq), received - float(sent))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.closed = True
            writer.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bench(args) -> dict:
    url = urlparse(args.url)
    subscribers = [Subscriber() for _ in range(args.subscribers)]
    tasks = [asyncio.create_task(s.run(url.hostname, url.port or 80, args.stream, args.token)) for s in subscribers]
    await asyncio.wait_for(asyncio.gather(*(s.connected.wait() for s in subscribers)), 30)

    count = int(args.rate * args.seconds)
    cpu_start, wall_start = cpu_seconds(args.server_pid), time.monotonic()
    client_start = time.process_time()
    command = [sys.executable, str(ROOT / "manage.py"), "publish_load", "--user", args.user, "--rate",
               str(args.rate), "--count", str(count)] + (["--delta"] if args.delta else [])
    publisher = await asyncio.create_subprocess_exec(*command, cwd=ROOT, stdout=subprocess.PIPE,
                                                     stderr=subprocess.PIPE)
    out, err = await publisher.communicate()
    if publisher.returncode != 0:
        raise SystemExit(f"publish_load failed:\n{err.decode()}")
    deadline = time.monotonic() + args.grace
    while time.monotonic() < deadline and any(len(s.latencies) < count for s in subscribers):
        await asyncio.sleep(0.05)
    wall = time.monotonic() - wall_start
    cpu_end = cpu_seconds(args.server_pid)
    client_cpu = time.process_time() - client_start
    publisher_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    latencies = [value * 1000 for s in subscribers for value in s.latencies.values()]
    delivered = sum(len(s.latencies) for s in subscribers)
    return {
        "subs": args.subscribers, "rate": args.rate, "events": count, "kind": "delta" if args.delta else "logged",
        "delivered": 100.0 * delivered / (count * args.subscribers),
        "p50": percentile(latencies, 0.50), "p99": percentile(latencies, 0.99), "max": max(latencies or [0]),
        "cpu": (cpu_end - cpu_start) if cpu_start is not None else None, "wall": wall,
        "client_cpu": client_cpu, "publisher_cpu": publisher_usage.ru_utime + publisher_usage.ru_stime,
        "publisher": out.decode().strip(), "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--user", required=True, help="username the events are published for")
    parser.add_argument("--token", required=True, help="an API token of that user")
    parser.add_argument("--server-pid", type=int, default=None, help="server pid, for its CPU time")
    parser.add_argument("--subscribers", type=int, nargs="+", default=[100])
    parser.add_argument("--rate", type=float, nargs="+", default=[1000])
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--grace", type=float, default=3, help="seconds to wait for stragglers")
    parser.add_argument("--stream", default="/global/event")
    parser.add_argument("--delta", action="store_true", help="publish message.part.delta (not logged)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration; the median is shown")
    args = parser.parse_args()

    groups = []
    for subscribers in args.subscribers:
        for rate in args.rate:
            run = argparse.Namespace(**{**vars(args), "subscribers": subscribers, "rate": rate})
            group = []
            for _ in range(args.repeat):
                group.append(asyncio.run(bench(run)))
                print(f"  done: {group[-1]['publisher']}; p99 {group[-1]['p99']:.1f} ms, "
                      f"load {group[-1]['load']:.2f}", file=sys.stderr)
            groups.append(group)
    print(f"median of {args.repeat} run(s) by p99:")
    table([sorted(group, key=lambda r: r["p99"])[len(group) // 2] for group in groups])
    if args.repeat > 1:
        print("all runs:")
        table([r for group in groups for r in group])


def table(rows: list[dict]) -> None:
    print(f"{'subs':>5} {'ev/s':>6} {'events':>7} {'kind':>7} {'delivered':>10} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'max ms':>8} {'server CPU s':>13} {'window s':>9} {'client CPU s':>13} {'load avg':>9}")
    for r in rows:
        cpu = f"{r['cpu']:.2f}" if r["cpu"] is not None else "-"
        print(f"{r['subs']:>5} {r['rate']:>6.0f} {r['events']:>7} {r['kind']:>7} {r['delivered']:>9.2f}% "
              f"{r['p50']:>8.1f} {r['p99']:>8.1f} {r['max']:>8.1f} {cpu:>13} {r['wall']:>9.1f} {r['client_cpu']:>13.2f} "
              f"{r['load']:>9.2f}")


if __name__ == "__main__":
    main()
