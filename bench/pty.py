"""PTY benchmark: output throughput through the WebSocket (long lines, short lines, `yes`) and the keystroke
echo round trip. Works against any server speaking opencode's PTY API, so the reference can be timed too.

    python bench/pty.py --url http://127.0.0.1:8000 --token as_...            # agentserver
    python bench/pty.py --url http://127.0.0.1:4096 --basic opencode:secret    # opencode serve
    python bench/pty.py --url ... --directory /path/inside/your/root --repeat 3
    python bench/pty.py --url http://worker-a --ws-url http://worker-b --token ...  # through another worker

Each throughput run starts `sh -c 'read x; <workload>; echo <marker>'`, attaches with `?cursor=-1`, then
sends a newline and times until the marker arrives: only live output is measured, never a replay."""
from __future__ import annotations

import argparse
import asyncio
import base64
import statistics
import sys
import time

import httpx
from websockets.asyncio.client import connect

MARKER = b"__PTY_BENCH_DONE__"
WORKLOADS = [
    ("long lines (base64 -w 0, 30 MB random)", "head -c 30000000 /dev/urandom | base64 -w 0; echo"),
    ("short lines (base64 -w 76, 15 MB random)", "head -c 15000000 /dev/urandom | base64 -w 76"),
    ("yes | head -c 50M (2-byte lines)", "yes | head -c 50000000"),
]


class Target:
    def __init__(self, url: str, token: str | None, basic: str | None, directory: str | None,
                 ws_url: str | None = None):
        self.url = url.rstrip("/")
        self.ws_base = (ws_url or url).rstrip("/")
        self.headers = {}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        elif basic:
            self.headers["Authorization"] = "Basic " + base64.b64encode(basic.encode()).decode()
        self.params = {"directory": directory} if directory else {}
        self.http = httpx.Client(base_url=self.url, headers=self.headers, params=self.params, timeout=30)

    def create(self, script: str) -> dict:
        response = self.http.post("/pty", json={"command": "/bin/sh", "args": ["-c", script],
                                                "env": {"LC_ALL": "C"}})
        response.raise_for_status()
        return response.json()

    def remove(self, pty_id: str) -> None:
        self.http.delete(f"/pty/{pty_id}")

    def socket(self, pty_id: str):
        ws_url = self.ws_base.replace("http://", "ws://").replace("https://", "wss://")
        query = "cursor=-1" + (f"&directory={self.params['directory']}" if self.params else "")
        return connect(f"{ws_url}/pty/{pty_id}/connect?{query}", additional_headers=self.headers,
                       max_size=None, compression=None, ping_interval=None)


async def _wait_cursor_frame(ws) -> None:
    while True:
        frame = await asyncio.wait_for(ws.recv(decode=False), 10)
        if frame[:1] == b"\x00":
            return


async def throughput(target: Target, script: str) -> tuple[float, int, int, float]:
    """(MB/s, bytes, frames, seconds)."""
    pty = target.create(f"read x; {script}; echo {MARKER.decode()[:9]}''{MARKER.decode()[9:]}")
    try:
        async with target.socket(pty["id"]) as ws:
            await _wait_cursor_frame(ws)
            received, frames, tail = 0, 0, b""
            started = time.perf_counter()
            await ws.send("\r")
            while True:
                frame = await asyncio.wait_for(ws.recv(decode=False), 120)
                if frame[:1] == b"\x00":
                    continue
                received += len(frame)
                frames += 1
                tail = (tail + frame)[-64:]
                if MARKER in tail:
                    break
            elapsed = time.perf_counter() - started
    finally:
        target.remove(pty["id"])
    return received / elapsed / 1e6, received, frames, elapsed


async def echo_round_trip(target: Target, count: int) -> list[float]:
    pty = target.create("read x; exec cat")
    samples = []
    try:
        async with target.socket(pty["id"]) as ws:
            await _wait_cursor_frame(ws)
            await ws.send("\r")
            await asyncio.sleep(0.3)
            while True:  # drain the echo of the newline
                try:
                    await asyncio.wait_for(ws.recv(decode=False), 0.2)
                except asyncio.TimeoutError:
                    break
            for i in range(count):
                key = "abcdefghij"[i % 10]
                started = time.perf_counter()
                await ws.send(key)
                seen = b""
                while key.encode() not in seen:
                    seen += await asyncio.wait_for(ws.recv(decode=False), 10)
                samples.append((time.perf_counter() - started) * 1000)
    finally:
        target.remove(pty["id"])
    return samples


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", help="Bearer token (agentserver)")
    parser.add_argument("--basic", help="user:password for HTTP Basic (opencode serve)")
    parser.add_argument("--directory", help="?directory= for every request")
    parser.add_argument("--ws-url", help="attach the WebSockets through this base URL (another worker)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per workload; the best is shown")
    parser.add_argument("--echo-count", type=int, default=200)
    parser.add_argument("--only", help="run only the workloads whose label contains this text")
    args = parser.parse_args()
    target = Target(args.url, args.token, args.basic, args.directory, args.ws_url)

    via = f" (WebSockets through {target.ws_base})" if target.ws_base != target.url else ""
    print(f"PTY benchmark against {target.url}{via}\n")
    print(f"| {'output through PTY → WebSocket':<44} | {'MB/s':>7} | {'MB':>6} | {'frames':>7} | {'seconds':>7} |")
    print(f"|{'-' * 46}|{'-' * 9}|{'-' * 8}|{'-' * 9}|{'-' * 9}|")
    for label, script in WORKLOADS:
        if args.only and args.only not in label:
            continue
        runs = [await throughput(target, script) for _ in range(max(args.repeat, 1))]
        rate, size, frames, seconds = max(runs)
        print(f"| {label:<44} | {rate:7.1f} | {size / 1e6:6.1f} | {frames:7d} | {seconds:7.2f} |", flush=True)
    samples = await echo_round_trip(target, args.echo_count)
    samples.sort()
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(f"\n| keystroke echo round trip ({len(samples)} keys) | p50 {statistics.median(samples):.2f} ms "
          f"| p95 {p95:.2f} ms | mean {statistics.fmean(samples):.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
